// Package crd embeds graphcd's CustomResourceDefinitions and installs them.
//
// The definitions in bases/ are generated from api/v1alpha1 by
// controller-gen (`make generate`); this package compiles them into the
// binary so `graphcd server` can install or upgrade them at startup:
//
//	if err := crd.Install(ctx, apiextensionsClient); err != nil {
//		return fmt.Errorf("install CRDs: %w", err)
//	}
//
// Apply the YAML with `kubectl apply --server-side`, as Install does:
// client-side apply would copy the Application CRD (about 170 KB as JSON)
// into an annotation, where all annotations together may take 256 KiB:
// a CRD growing with Argo CD's fields would outgrow it.
package crd

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	applyv1 "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// fieldManager is the server-side apply field manager Install uses, as
// shown in the CRDs' metadata.managedFields.
const fieldManager = "graphcd"

// pollInterval is how often Install checks whether the CRDs are
// established; the API server usually needs well under a second.
const pollInterval = 250 * time.Millisecond

// ErrNotEstablished is wrapped by the errors of Established and Install
// when a CRD is missing or not yet served, as opposed to failing to talk
// to the API server. Readiness checks can use it to tell "not yet" from
// "broken".
var ErrNotEstablished = errors.New("not established")

// decoded decodes the embedded definitions once; Objects hands out copies.
var decoded = sync.OnceValues(decode)

// Objects returns graphcd's CustomResourceDefinitions, sorted by name. The
// caller owns the returned objects and may change them.
func Objects() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := decoded()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		out[i] = crd.DeepCopy()
	}
	return out, nil
}

// Install creates graphcd's CRDs, or updates them to this binary's
// version, and waits until the API server serves all of them. It uses
// server-side apply with field manager "graphcd" and forces ownership, so
// it is idempotent and safe to run from several processes at once. It
// waits for as long as ctx allows.
func Install(ctx context.Context, c apiextensionsclientset.Interface) error {
	crds, err := Objects()
	if err != nil {
		return err
	}
	client := c.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range crds {
		cfg, err := applyConfiguration(crd)
		if err != nil {
			return err
		}
		opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
		if _, err := client.Apply(ctx, cfg, opts); err != nil {
			return fmt.Errorf("apply crd %s: %w", crd.Name, err)
		}
	}

	var last error
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		last = established(ctx, c, crds)
		if last == nil {
			last = discoverable(c, crds)
		}
		return last == nil, nil
	})
	if err != nil {
		if last == nil {
			last = err
		}
		return fmt.Errorf("wait for graphcd CRDs: %w: %w", err, last)
	}
	return nil
}

// Established returns nil when all of graphcd's CRDs exist and are
// established (served by the API server). Otherwise it returns an error
// naming the first CRD that is not, such as "crd applications.graphcd.io
// not established: not found", which wraps ErrNotEstablished; or the error
// of reading it.
func Established(ctx context.Context, c apiextensionsclientset.Interface) error {
	crds, err := decoded()
	if err != nil {
		return err
	}
	return established(ctx, c, crds)
}

// established checks the CRDs named by want, in order.
func established(ctx context.Context, c apiextensionsclientset.Interface, want []*apiextensionsv1.CustomResourceDefinition) error {
	client := c.ApiextensionsV1().CustomResourceDefinitions()
	for _, w := range want {
		got, err := client.Get(ctx, w.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("crd %s %w: not found", w.Name, ErrNotEstablished)
		}
		if err != nil {
			return fmt.Errorf("get crd %s: %w", w.Name, err)
		}
		if cond := condition(got, apiextensionsv1.Established); cond == nil || cond.Status != apiextensionsv1.ConditionTrue {
			return fmt.Errorf("crd %s %w%s", w.Name, ErrNotEstablished, describe(cond))
		}
	}
	return nil
}

// discoverable checks that API discovery lists each served version of the
// CRDs in want: it follows Established by a moment, and clients that map
// kinds through discovery (controller-runtime's) fail until it does.
func discoverable(c apiextensionsclientset.Interface, want []*apiextensionsv1.CustomResourceDefinition) error {
	for _, w := range want {
		for _, v := range w.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := w.Spec.Group + "/" + v.Name
			list, err := c.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				return fmt.Errorf("crd %s %w: discovery of %s: %w", w.Name, ErrNotEstablished, gv, err)
			}
			if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == w.Spec.Names.Plural }) {
				return fmt.Errorf("crd %s %w: discovery of %s does not list %s yet", w.Name, ErrNotEstablished, gv, w.Spec.Names.Plural)
			}
		}
	}
	return nil
}

// condition returns the CRD's condition of the given type, or nil.
func condition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// describe renders the reason and message of a condition that is not
// true, as an error suffix; empty when there is nothing to add.
func describe(cond *apiextensionsv1.CustomResourceDefinitionCondition) string {
	if cond == nil {
		return ""
	}
	var parts []string
	for _, s := range []string{cond.Reason, cond.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ": ")
}

// applyConfiguration turns a CRD into the apply configuration that
// server-side apply sends. Status is left out: it belongs to the API
// server.
func applyConfiguration(crd *apiextensionsv1.CustomResourceDefinition) (*applyv1.CustomResourceDefinitionApplyConfiguration, error) {
	b, err := json.Marshal(crd)
	if err != nil {
		return nil, fmt.Errorf("encode crd %s: %w", crd.Name, err)
	}
	var cfg applyv1.CustomResourceDefinitionApplyConfiguration
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("convert crd %s to apply configuration: %w", crd.Name, err)
	}
	cfg.Status = nil
	return &cfg, nil
}

// decode reads every YAML document in bases/ as a CRD, strictly, so a
// malformed or hand-edited file fails loudly instead of installing a
// partial definition.
func decode() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, name := range files {
		b, err := bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", name, err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(doc, crd); err != nil {
				return nil, fmt.Errorf("decode %s: %w", name, err)
			}
			if crd.Name == "" && crd.Kind == "" {
				continue // a document holding only comments
			}
			if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
				return nil, fmt.Errorf("decode %s: want a named CustomResourceDefinition, got kind %q name %q", name, crd.Kind, crd.Name)
			}
			crds = append(crds, crd)
		}
	}
	if len(crds) == 0 {
		return nil, errors.New("no CRDs embedded in config/crd/bases")
	}
	slices.SortFunc(crds, func(a, b *apiextensionsv1.CustomResourceDefinition) int {
		return strings.Compare(a.Name, b.Name)
	})
	return crds, nil
}
