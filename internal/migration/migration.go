// Package migration reads a running Argo CD's objects and settings and
// converts them to graphcd's (graphcd admin import-argocd; see
// docs/migrating-from-argo-cd.md). Reading never writes to the source
// cluster. Convert returns the objects to write, in graphcd's namespace,
// and a Report that says, for each Argo CD object, what carries over as it
// is, what changes and how, and what cannot move. A Report never holds a
// Secret's value, only key names.
//
// Live resources keep their owner: graphcd reads the tracking annotation
// and label Argo CD writes, the tracking ids of apps in the control-plane
// namespace are their names in both, and the tracking method and
// instance label key are carried into graphcd's settings.
package migration

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// ArgoGroup is Argo CD's API group.
const ArgoGroup = "argoproj.io"

// Argo CD's resources, read as unstructured objects.
var (
	argoApps     = schema.GroupVersionResource{Group: ArgoGroup, Version: "v1alpha1", Resource: "applications"}
	argoProjects = schema.GroupVersionResource{Group: ArgoGroup, Version: "v1alpha1", Resource: "appprojects"}
	argoAppSets  = schema.GroupVersionResource{Group: ArgoGroup, Version: "v1alpha1", Resource: "applicationsets"}
	configMaps   = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	statefulSets = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	deployments  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Argo CD's settings ConfigMaps and Secrets.
const (
	ArgoSettingsConfigMap      = "argocd-cm"
	ArgoRBACConfigMap          = "argocd-rbac-cm"
	ArgoSecret                 = "argocd-secret" //nolint:gosec // G101: a Secret's name
	ArgoNotificationsConfigMap = "argocd-notifications-cm"
	ArgoNotificationsSecret    = "argocd-notifications-secret" //nolint:gosec // G101: a Secret's name
	ArgoKnownHostsConfigMap    = "argocd-ssh-known-hosts-cm"
	ArgoTLSCertsConfigMap      = "argocd-tls-certs-cm"
	ArgoGPGKeysConfigMap       = "argocd-gpg-keys-cm"
	// ArgoParamsConfigMap holds the components' parameters, among them the
	// other namespaces Argo CD serves.
	ArgoParamsConfigMap = "argocd-cmd-params-cm"
	// argoController is the application controller's workload and its
	// app.kubernetes.io/name label.
	argoController = "argocd-application-controller"
)

// Source is what Read found of one Argo CD installation.
type Source struct {
	// Namespace is Argo CD's namespace.
	Namespace string
	// Applications and ApplicationSets are those of Argo CD's namespace
	// and of the other namespaces it serves (argocd-cmd-params-cm's
	// application.namespaces, applicationsetcontroller.namespaces);
	// AppProjects those of its namespace.
	Applications, Projects, ApplicationSets []*unstructured.Unstructured
	// ConfigMaps are Argo CD's settings ConfigMaps found, by name.
	ConfigMaps map[string]*unstructured.Unstructured
	// Secrets are argocd-secret, argocd-notifications-secret and the
	// repository, credential template and cluster Secrets.
	Secrets []*unstructured.Unstructured
	// Controllers names the application controller's workloads that
	// still run pods, with their images.
	Controllers []Workload
}

// Empty reports whether Read found nothing of Argo CD: no objects, no
// settings, no Secrets (a wrong namespace, most likely).
func (s *Source) Empty() bool {
	return len(s.Applications)+len(s.Projects)+len(s.ApplicationSets)+len(s.ConfigMaps)+len(s.Secrets) == 0
}

// Workload is one Argo CD application controller found running.
type Workload struct {
	Kind, Name string
	Replicas   int64
	Image      string
}

// Namespaces compiles the namespace patterns of Argo CD's parameters
// (globs, or regular expressions between slashes) around own, Argo CD's
// namespace, into whether a namespace is served.
type Namespaces func(own string, patterns []string) (func(namespace string) bool, error)

// Read lists Argo CD's objects in namespace with dyn, reading only.
func Read(ctx context.Context, dyn dynamic.Interface, namespace string, served Namespaces) (*Source, error) {
	s := &Source{Namespace: namespace, ConfigMaps: map[string]*unstructured.Unstructured{}}
	params, err := dyn.Resource(configMaps).Namespace(namespace).Get(ctx, ArgoParamsConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		params = nil
	case err != nil:
		return nil, fmt.Errorf("get ConfigMap %s/%s: %w", namespace, ArgoParamsConfigMap, err)
	}
	if s.Applications, err = listServed(ctx, dyn, argoApps, namespace, params, "application.namespaces", served); err != nil {
		return nil, err
	}
	if s.Projects, err = list(ctx, dyn, argoProjects, namespace); err != nil {
		return nil, err
	}
	if s.ApplicationSets, err = listServed(ctx, dyn, argoAppSets, namespace, params, "applicationsetcontroller.namespaces", served); err != nil {
		return nil, err
	}
	for _, name := range []string{ArgoSettingsConfigMap, ArgoRBACConfigMap, ArgoNotificationsConfigMap, ArgoKnownHostsConfigMap, ArgoTLSCertsConfigMap, ArgoGPGKeysConfigMap} {
		cm, err := dyn.Resource(configMaps).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("get ConfigMap %s/%s: %w", namespace, name, err)
		}
		s.ConfigMaps[name] = cm
	}
	all, err := list(ctx, dyn, secrets, namespace)
	if err != nil {
		return nil, err
	}
	for _, sec := range all {
		if sec.GetName() == ArgoSecret || sec.GetName() == ArgoNotificationsSecret || sec.GetLabels()[wellknown.ArgoSecretTypeLabel] != "" {
			s.Secrets = append(s.Secrets, sec)
		}
	}
	if s.Controllers, err = controllers(ctx, dyn, namespace); err != nil {
		return nil, err
	}
	return s, nil
}

// listServed lists one resource in Argo CD's namespace and in those that
// params' key names.
func listServed(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, own string, params *unstructured.Unstructured, key string, served Namespaces) ([]*unstructured.Unstructured, error) {
	var patterns []string
	if params != nil {
		v, _, _ := unstructured.NestedString(params.Object, "data", key)
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				patterns = append(patterns, p)
			}
		}
	}
	if len(patterns) == 0 {
		return list(ctx, dyn, gvr, own)
	}
	allowed, err := served(own, patterns)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ArgoParamsConfigMap, key, err)
	}
	all, err := list(ctx, dyn, gvr, metav1.NamespaceAll)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(o *unstructured.Unstructured) bool {
		return o.GetNamespace() != own && !allowed(o.GetNamespace())
	}), nil
}

// list lists one resource; a resource the cluster does not serve (Argo
// CD's CRD not installed) has no objects.
func list(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespace string) ([]*unstructured.Unstructured, error) {
	l, err := dyn.Resource(gvr).Namespace(namespace).List(ctx, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s.%s: %w", gvr.Resource, gvr.Group, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, &l.Items[i])
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return strings.Compare(a.GetNamespace()+"/"+a.GetName(), b.GetNamespace()+"/"+b.GetName())
	})
	return out, nil
}

// controllers finds the application controller's StatefulSets and
// Deployments that run pods, by name or app.kubernetes.io/name label.
func controllers(ctx context.Context, dyn dynamic.Interface, namespace string) ([]Workload, error) {
	var out []Workload
	for _, r := range []struct {
		gvr  schema.GroupVersionResource
		kind string
	}{{statefulSets, "StatefulSet"}, {deployments, "Deployment"}} {
		objs, err := list(ctx, dyn, r.gvr, namespace)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetName() != argoController && o.GetLabels()["app.kubernetes.io/name"] != argoController {
				continue
			}
			want, found, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
			if !found {
				want = 1
			}
			have, _, _ := unstructured.NestedInt64(o.Object, "status", "replicas")
			if max(want, have) == 0 {
				continue
			}
			w := Workload{Kind: r.kind, Name: o.GetName(), Replicas: max(want, have)}
			if cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers"); len(cs) > 0 {
				if c, ok := cs[0].(map[string]any); ok {
					w.Image, _ = c["image"].(string)
				}
			}
			out = append(out, w)
		}
	}
	return out, nil
}
