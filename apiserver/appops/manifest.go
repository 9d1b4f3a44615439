package appops

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/approval"
)

// argoGroup is Argo CD's API group; manifests exported from Argo CD are
// accepted as they are.
const argoGroup = "argoproj.io"

// Namespaces says where Applications may live.
type Namespaces struct {
	// Default is the namespace of a manifest that names none.
	Default string
	// Allowed, when set, refuses the namespaces it does not allow: the
	// API and the controller serve the Applications of graphcd's
	// namespace and of --application-namespaces only, and nothing would
	// ever read an Application elsewhere. Nil allows any.
	Allowed func(namespace string) bool
}

// DecodeApplication reads an Application manifest (YAML or JSON, of
// graphcd's group or Argo CD's), keeping only what a client may set:
// name, namespace, labels, annotations, finalizers and spec. An
// *InvalidError says what is wrong with it.
func DecodeApplication(manifest string, ns Namespaces) (*v1alpha1.Application, error) {
	var in v1alpha1.Application
	if err := yaml.UnmarshalStrict([]byte(manifest), &in); err != nil {
		return nil, invalid("manifest: %v", err)
	}
	if in.Kind != "Application" {
		return nil, invalid("manifest: kind must be Application, got %q", in.Kind)
	}
	if gv := in.APIVersion; gv != v1alpha1.GroupVersion.String() && gv != argoGroup+"/v1alpha1" {
		return nil, invalid("manifest: apiVersion must be %s (or %s/v1alpha1), got %q", v1alpha1.GroupVersion, argoGroup, gv)
	}
	if in.Name == "" {
		return nil, invalid("manifest: metadata.name is required")
	}
	out := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{
			Name: in.Name, Namespace: in.Namespace,
			Labels: in.Labels, Annotations: in.Annotations, Finalizers: in.Finalizers,
		},
		Spec: in.Spec,
	}
	if out.Namespace == "" {
		out.Namespace = ns.Default
	}
	if ns.Allowed != nil && !ns.Allowed(out.Namespace) {
		return nil, invalid("manifest: metadata.namespace %q: graphcd serves Applications in %q and the namespaces of --application-namespaces only; set it to one of those or leave it out",
			truncate(out.Namespace, 63), ns.Default)
	}
	if err := checkSyncApproval(out.Spec.SyncApproval); err != nil {
		return nil, err
	}
	return out, nil
}

// checkSyncApproval checks a spec's sync approval policy; an
// *InvalidError names what is wrong.
func checkSyncApproval(p *v1alpha1.SyncApproval) error {
	if err := approval.Validate(p); err != nil {
		return invalid("spec.%v", err)
	}
	return nil
}

// DecodeSpec reads an ApplicationSpec (YAML or JSON). An *InvalidError
// says what is wrong with it.
func DecodeSpec(doc string) (v1alpha1.ApplicationSpec, error) {
	var spec v1alpha1.ApplicationSpec
	if err := yaml.UnmarshalStrict([]byte(doc), &spec); err != nil {
		return spec, invalid("spec: %v", err)
	}
	return spec, checkSyncApproval(spec.SyncApproval)
}

// DecodeProjectSpec reads an AppProjectSpec (YAML or JSON). An
// *InvalidError says what is wrong with it.
func DecodeProjectSpec(doc string) (v1alpha1.AppProjectSpec, error) {
	var spec v1alpha1.AppProjectSpec
	if err := yaml.UnmarshalStrict([]byte(doc), &spec); err != nil {
		return spec, invalid("spec: %v", err)
	}
	return spec, checkSyncApproval(spec.SyncApproval)
}

// DecodeProject reads an AppProject manifest (YAML or JSON, of graphcd's
// group or Argo CD's) for namespace, keeping only what a client may set:
// name, labels, annotations and spec. An *InvalidError says what is wrong
// with it.
func DecodeProject(manifest, namespace string) (*v1alpha1.AppProject, error) {
	var p v1alpha1.AppProject
	if err := yaml.UnmarshalStrict([]byte(manifest), &p); err != nil {
		return nil, invalid("manifest: %v", err)
	}
	switch {
	case p.Kind != "AppProject":
		return nil, invalid("manifest: kind must be AppProject, got %q", p.Kind)
	case p.APIVersion != v1alpha1.GroupVersion.String() && p.APIVersion != argoGroup+"/v1alpha1":
		return nil, invalid("manifest: apiVersion must be %s (or %s/v1alpha1), got %q", v1alpha1.GroupVersion, argoGroup, p.APIVersion)
	case p.Name == "":
		return nil, invalid("manifest: metadata.name is required")
	case p.Namespace != "" && p.Namespace != namespace:
		return nil, invalid("manifest: projects live in namespace %q, not %q", namespace, p.Namespace)
	}
	if err := checkSyncApproval(p.Spec.SyncApproval); err != nil {
		return nil, err
	}
	return &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: namespace, Labels: p.Labels, Annotations: p.Annotations},
		Spec:       p.Spec,
	}, nil
}

// truncate shortens s, a client's input, for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
