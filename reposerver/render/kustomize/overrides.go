package kustomize

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// hasOverrides reports whether o changes the app's kustomization at all.
func hasOverrides(o *v1alpha1.ApplicationSourceKustomize) bool {
	return o != nil && (o.NamePrefix != "" || o.NameSuffix != "" || len(o.Images) > 0 ||
		len(o.Replicas) > 0 || len(o.CommonLabels) > 0 || len(o.CommonAnnotations) > 0 ||
		o.Namespace != "" || len(o.Patches) > 0 || len(o.Components) > 0)
}

// applyOverrides edits k as Argo CD's `kustomize edit` commands would:
// name prefix and suffix, namespace replace the kustomization's own;
// images and replicas are merged by name; labels and annotations are added
// and, unless forced, may not change a key the kustomization already sets;
// patches are appended. Components are resolved by the caller (they need
// the file system) and passed in. env holds the variables that images,
// label values and (with commonAnnotationsEnvsubst) annotation values may
// use, as Argo CD's build environment does.
func applyOverrides(k *types.Kustomization, o *v1alpha1.ApplicationSourceKustomize, env render.BuildEnv, components []string) error {
	if o.NamePrefix != "" {
		k.NamePrefix = o.NamePrefix
	}
	if o.NameSuffix != "" {
		k.NameSuffix = o.NameSuffix
	}
	if len(o.Images) > 0 {
		images := make([]types.Image, 0, len(o.Images))
		for _, arg := range o.Images {
			img, err := parseImage(env.Expand(arg))
			if err != nil {
				return err
			}
			images = append(images, img)
		}
		k.Images = mergeImages(k.Images, images)
	}
	if len(o.Replicas) > 0 {
		replicas, err := parseReplicas(o.Replicas)
		if err != nil {
			return err
		}
		k.Replicas = mergeReplicas(k.Replicas, replicas)
	}
	if len(o.CommonLabels) > 0 {
		labels := make(map[string]string, len(o.CommonLabels))
		for name, value := range o.CommonLabels {
			labels[name] = env.Expand(value)
		}
		if errs := metav1validation.ValidateLabels(labels, field.NewPath("commonLabels")); len(errs) > 0 {
			return fmt.Errorf("invalid override: %w", errs.ToAggregate())
		}
		if err := addLabels(k, labels, o.ForceCommonLabels, o.LabelWithoutSelector); err != nil {
			return err
		}
	}
	if len(o.CommonAnnotations) > 0 {
		annotations := o.CommonAnnotations
		if o.CommonAnnotationsEnvsubst {
			annotations = make(map[string]string, len(o.CommonAnnotations))
			for name, value := range o.CommonAnnotations {
				annotations[name] = env.Expand(value)
			}
		}
		if errs := apivalidation.ValidateAnnotations(annotations, field.NewPath("commonAnnotations")); len(errs) > 0 {
			return fmt.Errorf("invalid override: %w", errs.ToAggregate())
		}
		if k.CommonAnnotations == nil {
			k.CommonAnnotations = map[string]string{}
		}
		if err := addPairs(k.CommonAnnotations, annotations, o.ForceCommonAnnotations, "commonAnnotations", "annotation"); err != nil {
			return err
		}
	}
	if o.Namespace != "" {
		if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
			return fmt.Errorf("invalid override: namespace %q: %s", o.Namespace, strings.Join(errs, "; "))
		}
		k.Namespace = o.Namespace
	}
	for _, p := range o.Patches {
		k.Patches = append(k.Patches, convertPatch(p))
	}
	for _, c := range components {
		if !slices.Contains(k.Components, c) {
			k.Components = append(k.Components, c)
		}
	}
	return nil
}

// parseImage parses an image override in `kustomize edit set image` form:
// [name=]newName[:tag][@digest], name:tag, name@digest or name=newName.
// "*" as new name, tag or digest keeps the kustomization's value.
func parseImage(arg string) (types.Image, error) {
	key, value, hasKey := strings.Cut(arg, "=")
	if !hasKey {
		value = arg
	}
	name, tag, digest := util.SplitImageName(value)
	if name == "" || (!hasKey && tag == "" && digest == "") {
		return types.Image{}, fmt.Errorf("invalid image override %q: use name=newName[:tag][@digest], name:tag, name@digest or name=newName", arg)
	}
	img := types.Image{Name: name, NewTag: tag, Digest: digest}
	if hasKey {
		if key == "" {
			return types.Image{}, fmt.Errorf("invalid image override %q: empty image name", arg)
		}
		img.Name, img.NewName = key, name
	}
	return img, nil
}

// preserve in an image override keeps the kustomization's value.
const preserve = "*"

// mergeImages merges overrides into the kustomization's images by name, as
// `kustomize edit set image` does, and sorts them by name.
func mergeImages(existing, overrides []types.Image) []types.Image {
	byName := make(map[string]types.Image, len(existing)+len(overrides))
	for _, img := range existing {
		byName[img.Name] = img
	}
	for _, img := range overrides {
		old := byName[img.Name]
		if img.NewName == preserve {
			img.NewName = old.NewName
		}
		if img.NewTag == preserve {
			img.NewTag = old.NewTag
		}
		if img.Digest == preserve {
			img.Digest = old.Digest
		}
		byName[img.Name] = img
	}
	return slices.SortedFunc(maps.Values(byName), func(a, b types.Image) int { return strings.Compare(a.Name, b.Name) })
}

func parseReplicas(in []v1alpha1.KustomizeReplica) ([]types.Replica, error) {
	out := make([]types.Replica, 0, len(in))
	for _, r := range in {
		var count int64
		switch r.Count.Type {
		case intstr.Int:
			count = int64(r.Count.IntVal)
		default:
			n, err := strconv.ParseInt(r.Count.StrVal, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("invalid override: replicas of %q: count %q is not a number", r.Name, r.Count.StrVal)
			}
			count = n
		}
		if r.Name == "" || count < 0 {
			return nil, fmt.Errorf("invalid override: replicas need a name and a count >= 0 (got %q=%d)", r.Name, count)
		}
		out = append(out, types.Replica{Name: r.Name, Count: count})
	}
	return out, nil
}

// mergeReplicas merges overrides into the kustomization's replicas by name
// and sorts them by name.
func mergeReplicas(existing, overrides []types.Replica) []types.Replica {
	byName := make(map[string]types.Replica, len(existing)+len(overrides))
	for _, r := range existing {
		byName[r.Name] = r
	}
	for _, r := range overrides {
		byName[r.Name] = r
	}
	return slices.SortedFunc(maps.Values(byName), func(a, b types.Replica) int { return strings.Compare(a.Name, b.Name) })
}

// addLabels adds labels as `kustomize edit add label` does: to commonLabels
// (selectors included), or with withoutSelector to a labels entry that
// leaves selectors and templates alone.
func addLabels(k *types.Kustomization, labels map[string]string, force, withoutSelector bool) error {
	if !withoutSelector {
		if k.CommonLabels == nil { //nolint:staticcheck // Argo CD writes commonLabels
			k.CommonLabels = map[string]string{} //nolint:staticcheck // Argo CD writes commonLabels
		}
		return addPairs(k.CommonLabels, labels, force, "commonLabels", "label") //nolint:staticcheck // Argo CD writes commonLabels
	}
	for i := range k.Labels {
		if !k.Labels[i].IncludeSelectors && !k.Labels[i].IncludeTemplates {
			if k.Labels[i].Pairs == nil {
				k.Labels[i].Pairs = map[string]string{}
			}
			return addPairs(k.Labels[i].Pairs, labels, force, "labels", "label")
		}
	}
	pairs := map[string]string{}
	if err := addPairs(pairs, labels, force, "labels", "label"); err != nil {
		return err
	}
	k.Labels = append(k.Labels, types.Label{Pairs: pairs})
	return nil
}

// addPairs adds src to dst; a key dst already has is an error unless force.
func addPairs(dst, src map[string]string, force bool, field, what string) error {
	if !force {
		var conflicts []string
		for _, key := range slices.Sorted(maps.Keys(src)) {
			if _, ok := dst[key]; ok {
				conflicts = append(conflicts, key)
			}
		}
		if len(conflicts) > 0 {
			return fmt.Errorf("%w: %s %s already set in the kustomization's %s; set force%s to override",
				ErrConflict, what, strings.Join(conflicts, ", "), field, forceField(field))
		}
	}
	maps.Copy(dst, src)
	return nil
}

// ErrConflict is wrapped when a commonLabels or commonAnnotations override
// names a key the kustomization already sets and the matching force option
// (forceCommonLabels, forceCommonAnnotations) is off, as in Argo CD.
var ErrConflict = errors.New("override conflicts with the kustomization")

func forceField(field string) string {
	if field == "commonAnnotations" {
		return "CommonAnnotations"
	}
	return "CommonLabels"
}

func convertPatch(p v1alpha1.KustomizePatch) types.Patch {
	out := types.Patch{Path: p.Path, Patch: p.Patch}
	if p.Target != nil {
		out.Target = &types.Selector{
			ResId: resid.ResId{
				Gvk:       resid.Gvk{Group: p.Target.Group, Version: p.Target.Version, Kind: p.Target.Kind},
				Name:      p.Target.Name,
				Namespace: p.Target.Namespace,
			},
			AnnotationSelector: p.Target.AnnotationSelector,
			LabelSelector:      p.Target.LabelSelector,
		}
	}
	if p.Options["allowNameChange"] || p.Options["allowKindChange"] {
		out.Options = &types.PatchArgs{
			AllowNameChange: p.Options["allowNameChange"],
			AllowKindChange: p.Options["allowKindChange"],
		}
	}
	return out
}
