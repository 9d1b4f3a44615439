package appset

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/diff"
)

// keptAnnotations are annotations of a generated Application the set
// never overwrites: others write them (a refresh request, notifications'
// state, the approvals of a held sync).
var keptAnnotations = []string{
	v1alpha1.RefreshAnnotation, v1alpha1.ArgoRefreshAnnotation,
	"notified.notifications.argoproj.io", lastApplied, v1alpha1.SyncApprovalsAnnotation,
}

// newIgnorer compiles ignoreApplicationDifferences; nil when there are
// none.
func newIgnorer(rules []v1alpha1.ApplicationSetResourceIgnoreDifferences) (*diff.Differ, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	ign := make([]diff.IgnoreRule, len(rules))
	for i, r := range rules {
		ign[i] = diff.IgnoreRule{Group: v1alpha1.GroupName, Kind: "Application", Name: r.Name, JSONPointers: r.JSONPointers, JQPathExpressions: r.JQPathExpressions}
	}
	d, err := diff.New(diff.Options{Ignore: ign})
	if err != nil {
		return nil, fmt.Errorf("ignoreApplicationDifferences: %w", err)
	}
	return d, nil
}

// updated is existing made as generated — spec, labels, annotations,
// finalizers and the set's owner reference — keeping the preserved
// annotations and labels and the fields ignoreApplicationDifferences
// names; nil when existing already is.
func updated(existing, generated *v1alpha1.Application, set *v1alpha1.ApplicationSet, ignore *diff.Differ) (*v1alpha1.Application, error) {
	var keepLabels, keepAnnotations []string
	if pf := set.Spec.PreservedFields; pf != nil {
		keepLabels, keepAnnotations = pf.Labels, pf.Annotations
	}
	// The parts first, compared with existing's, so that an Application
	// as generated (the common case) costs no copy of its status.
	want := existing.ObjectMeta
	want.Labels = withKept(generated.Labels, existing.Labels, keepLabels)
	want.Annotations = withKept(generated.Annotations, existing.Annotations, append(slices.Clone(keptAnnotations), keepAnnotations...))
	want.Finalizers = slices.Clone(generated.Finalizers)
	want.OwnerReferences = withOwner(existing.OwnerReferences, ownerRef(set))
	spec := &generated.Spec
	if ignore == nil && equality.Semantic.DeepEqual(*spec, existing.Spec) && sameMeta(&want, &existing.ObjectMeta) {
		return nil, nil
	}
	out := existing.DeepCopy()
	out.Spec = *spec.DeepCopy()
	out.Labels, out.Annotations, out.Finalizers, out.OwnerReferences = want.Labels, want.Annotations, want.Finalizers, want.OwnerReferences
	if ignore != nil {
		var err error
		if out, err = applyIgnored(ignore, out, existing); err != nil {
			return nil, fmt.Errorf("ignoreApplicationDifferences: %w", err)
		}
		if equality.Semantic.DeepEqual(out.Spec, existing.Spec) && sameMeta(&out.ObjectMeta, &existing.ObjectMeta) {
			return nil, nil
		}
	}
	return out, nil
}

// sameMeta reports whether the metadata a set writes is the same in a
// and b.
func sameMeta(a, b *metav1.ObjectMeta) bool {
	return sameMap(a.Labels, b.Labels) && sameMap(a.Annotations, b.Annotations) &&
		slices.Equal(a.Finalizers, b.Finalizers) && equality.Semantic.DeepEqual(a.OwnerReferences, b.OwnerReferences)
}

// withKept is generated's map plus the keys of keep that existing has.
func withKept(generated, existing map[string]string, keep []string) map[string]string {
	out := maps.Clone(generated)
	for _, k := range keep {
		if v, ok := existing[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// withOwner is refs with the set's controller reference in place of any
// earlier one of it.
func withOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	out := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return r.UID == owner.UID })
	return append(out, owner)
}

func sameMap(a, b map[string]string) bool { return len(a) == len(b) && maps.Equal(a, b) }

// applyIgnored gives want the values existing has where an ignore rule
// matches.
func applyIgnored(ignore *diff.Differ, want, existing *v1alpha1.Application) (*v1alpha1.Application, error) {
	w, err := toUnstructured(want)
	if err != nil {
		return nil, err
	}
	e, err := toUnstructured(existing)
	if err != nil {
		return nil, err
	}
	merged, err := ignore.ApplyIgnored(w, e)
	if err != nil {
		return nil, err
	}
	var out v1alpha1.Application
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(merged.Object, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func toUnstructured(app *v1alpha1.Application) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(app)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("Application")
	return u, nil
}
