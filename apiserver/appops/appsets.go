package appops

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
)

// DecodeApplicationSet reads an ApplicationSet manifest (YAML or JSON, of
// graphcd's group or Argo CD's), keeping only what a client may set:
// name, namespace, labels, annotations and spec. Finalizers and status
// are dropped: nothing would ever remove a finalizer of a set. An
// *InvalidError says what is wrong with it.
func DecodeApplicationSet(manifest string, ns Namespaces) (*v1alpha1.ApplicationSet, error) {
	var in v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &in); err != nil {
		return nil, invalid("manifest: %v", err)
	}
	switch {
	case in.Kind != "ApplicationSet":
		return nil, invalid("manifest: kind must be ApplicationSet, got %q", truncate(in.Kind, 63))
	case in.APIVersion != v1alpha1.GroupVersion.String() && in.APIVersion != argoGroup+"/v1alpha1":
		return nil, invalid("manifest: apiVersion must be %s (or %s/v1alpha1), got %q", v1alpha1.GroupVersion, argoGroup, truncate(in.APIVersion, 63))
	case in.Name == "":
		return nil, invalid("manifest: metadata.name is required")
	case len(in.Spec.Generators) == 0:
		return nil, invalid("manifest: spec.generators is empty: a set needs at least one generator")
	}
	out := &v1alpha1.ApplicationSet{
		ObjectMeta: metav1.ObjectMeta{Name: in.Name, Namespace: in.Namespace, Labels: in.Labels, Annotations: in.Annotations},
		Spec:       in.Spec,
	}
	if out.Namespace == "" {
		out.Namespace = ns.Default
	}
	if ns.Allowed != nil && !ns.Allowed(out.Namespace) {
		return nil, invalid("manifest: metadata.namespace %q: graphcd serves ApplicationSets in %q and the namespaces of --application-namespaces only; set it to one of those or leave it out",
			truncate(out.Namespace, 63), ns.Default)
	}
	return out, nil
}

// DecodeApplicationSetSpec reads an ApplicationSetSpec (YAML or JSON, the
// content of spec:). An *InvalidError says what is wrong with it.
func DecodeApplicationSetSpec(doc string) (v1alpha1.ApplicationSetSpec, error) {
	var spec v1alpha1.ApplicationSetSpec
	if err := yaml.UnmarshalStrict([]byte(doc), &spec); err != nil {
		return spec, invalid("spec: %v", err)
	}
	if len(spec.Generators) == 0 {
		return spec, invalid("spec: generators is empty: a set needs at least one generator")
	}
	return spec, nil
}

// GetApplicationSet reads the set at key from the API server, nil when
// there is none.
func (s Service) GetApplicationSet(ctx context.Context, key types.NamespacedName) (*v1alpha1.ApplicationSet, error) {
	return getObject[v1alpha1.ApplicationSet](ctx, s.Client, key)
}

// CreateApplicationSet creates set. When the name is taken, mayReplace
// first judges the existing set as read for this very write, and its
// error ends the call; then, with upsert, the existing set gets set's
// spec, labels and annotations (its status stays), and without, an
// AlreadyExists error is returned.
func (s Service) CreateApplicationSet(ctx context.Context, set *v1alpha1.ApplicationSet, upsert bool, mayReplace func(existing *v1alpha1.ApplicationSet) error) (*v1alpha1.ApplicationSet, error) {
	return createObject(ctx, s.Client, set, "applicationsets", upsert, mayReplace, func(cur, set *v1alpha1.ApplicationSet) {
		cur.Spec = set.Spec
		cur.Labels, cur.Annotations = set.Labels, set.Annotations
	})
}

// UpdateApplicationSet lets change modify the set at key and writes it
// back with its resourceVersion, retrying with a fresh read on conflicts
// (so change must be repeatable). An error from change ends it without
// writing.
func (s Service) UpdateApplicationSet(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.ApplicationSet) error) (*v1alpha1.ApplicationSet, error) {
	return updateObject(ctx, s.Client, key, change)
}

// DeleteApplicationSet deletes the set at key once authorize accepts it
// as read for this very delete: the delete is conditional on that
// version, and read again when the set changed meanwhile (its controller
// writes its status often). The Applications the set owns go with it,
// through their owner references (Kubernetes' garbage collector), and
// their resources with them unless the set's syncPolicy preserves them.
func (s Service) DeleteApplicationSet(ctx context.Context, key types.NamespacedName, authorize func(cur *v1alpha1.ApplicationSet) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := s.GetApplicationSet(ctx, key)
		if err != nil {
			return err
		}
		if cur == nil {
			return apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("applicationsets").GroupResource(), key.Name)
		}
		audit.Touch(ctx, cur)
		if err := authorize(cur); err != nil {
			return err
		}
		if err := s.Client.Delete(ctx, cur, client.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}); err != nil {
			return err
		}
		audit.Change(ctx, cur, nil)
		return nil
	})
}
