// Package backup writes graphcd's state in a cluster to one YAML stream
// and reads it back: the Applications, AppProjects and ApplicationSets,
// the settings ConfigMaps and, when asked, the repository, cluster and
// account Secrets. What Export writes is what Import takes, so that an
// installation can be rebuilt from a file (graphcd admin export, graphcd
// admin import; see docs/backup.md).
//
// An exported object keeps only what its owner wrote: apiVersion, kind,
// name, labels, annotations, finalizers and the fields besides metadata
// and status. The server's bookkeeping (uid, resourceVersion, generation,
// timestamps, managed fields), owner references (their uids do not
// survive a restore), an Application's status and operation, and
// kubectl's last-applied annotation (which holds a Secret's data) are left
// out. Objects in graphcd's namespace are written without a namespace, so
// the file imports into any namespace.
package backup

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Scope is what a backup covers in one cluster.
type Scope struct {
	// Namespace is graphcd's namespace: its AppProjects, settings
	// ConfigMaps and Secrets, and its Applications and ApplicationSets.
	Namespace string
	// AppNamespace reports whether Applications and ApplicationSets of
	// another namespace are served (--application-namespaces); nil
	// serves only Namespace.
	AppNamespace func(namespace string) bool
	// ConfigMaps are the names of the settings ConfigMaps.
	ConfigMaps []string
	// Secrets are the names of graphcd's own Secrets, taken besides those
	// labelled as repositories, credential templates or clusters.
	Secrets []string
}

// kind is one kind a backup holds, in the order a restore writes them:
// settings first, projects before the apps that name them, apps before
// the sets that would generate them.
type kind struct {
	gvk      schema.GroupVersionKind
	resource string
	// anyNamespace: objects live in every served namespace, not only
	// graphcd's.
	anyNamespace bool
	// optional: the kind's CRD may be missing, and then it has no objects.
	optional bool
}

var (
	configMapKind = kind{gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, resource: "configmaps"}
	secretKind    = kind{gvk: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, resource: "secrets"}
	projectKind   = kind{gvk: v1alpha1.GroupVersion.WithKind("AppProject"), resource: "appprojects"}
	appKind       = kind{gvk: v1alpha1.GroupVersion.WithKind("Application"), resource: "applications", anyNamespace: true}
	appSetKind    = kind{gvk: v1alpha1.GroupVersion.WithKind("ApplicationSet"), resource: "applicationsets", anyNamespace: true, optional: true}
)

// kinds are the kinds of a backup, in restore order.
var kinds = []kind{configMapKind, secretKind, projectKind, appKind, appSetKind}

func (k kind) gvr() schema.GroupVersionResource { return k.gvk.GroupVersion().WithResource(k.resource) }

// kindOf returns the backup kind of gvk.
func kindOf(gvk schema.GroupVersionKind) (kind, bool) {
	for _, k := range kinds {
		if k.gvk == gvk {
			return k, true
		}
	}
	return kind{}, false
}

// rank orders objects for a restore: by kind, then namespace, then name.
func rank(a, b *unstructured.Unstructured) int {
	ka, _ := kindOf(a.GroupVersionKind())
	kb, _ := kindOf(b.GroupVersionKind())
	return cmp.Or(
		cmp.Compare(slices.Index(kinds, ka), slices.Index(kinds, kb)),
		cmp.Compare(a.GetNamespace(), b.GetNamespace()),
		cmp.Compare(a.GetName(), b.GetName()))
}

// served reports whether objects of k in namespace belong to the backup.
func (s Scope) served(k kind, namespace string) bool {
	if namespace == s.Namespace {
		return true
	}
	return k.anyNamespace && s.AppNamespace != nil && s.AppNamespace(namespace)
}

// isSecretTyped reports whether a Secret's labels declare it a
// repository, credential template or cluster.
func isSecretTyped(labels map[string]string) bool {
	return labels[wellknown.SecretTypeLabel] != "" || labels[wellknown.ArgoSecretTypeLabel] != ""
}

// list returns the live objects of k in scope, sorted: the settings
// ConfigMaps by name, the Secrets by label or name, the rest by
// namespace.
func (s Scope) list(ctx context.Context, dyn dynamic.Interface, k kind) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	switch k {
	case configMapKind:
		for _, name := range s.ConfigMaps {
			o, err := dyn.Resource(k.gvr()).Namespace(s.Namespace).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("get ConfigMap %s/%s: %w", s.Namespace, name, err)
			}
			out = append(out, o)
		}
	case secretKind:
		l, err := dyn.Resource(k.gvr()).Namespace(s.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list Secrets in %s: %w", s.Namespace, err)
		}
		for i := range l.Items {
			o := &l.Items[i]
			if isSecretTyped(o.GetLabels()) || slices.Contains(s.Secrets, o.GetName()) {
				out = append(out, o)
			}
		}
	default:
		ns := s.Namespace
		if k.anyNamespace && s.AppNamespace != nil {
			ns = metav1.NamespaceAll
		}
		l, err := dyn.Resource(k.gvr()).Namespace(ns).List(ctx, metav1.ListOptions{})
		if k.optional && apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", k.gvk.Kind, err)
		}
		for i := range l.Items {
			if s.served(k, l.Items[i].GetNamespace()) {
				out = append(out, &l.Items[i])
			}
		}
	}
	slices.SortFunc(out, rank)
	return out, nil
}
