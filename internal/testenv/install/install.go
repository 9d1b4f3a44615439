// Package install builds kustomizations and applies them to a test
// cluster as `kubectl apply -k --server-side` would, and acts as the
// ServiceAccounts an installation runs as. The deploy tests, the demo's
// checks and the split-role harness share it.
package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Build runs kustomize on dir and returns its objects in the order
// `kubectl apply -k` applies them.
func Build(dir string) ([]*unstructured.Unstructured, error) {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionLegacy
	rm, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out := make([]*unstructured.Unstructured, 0, len(rm.Resources()))
	for _, r := range rm.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(b); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// BuildInto builds an overlay of base that moves it to namespace, the way
// a user installing elsewhere would, with extra appended to the overlay's
// kustomization. The overlay is written in dir, which must exist.
func BuildInto(dir, base, namespace, extra string) ([]*unstructured.Unstructured, error) {
	abs, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	// kustomize takes no absolute paths: the base relative to the overlay.
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return nil, err
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n- %s\n%s", namespace, rel, extra)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return nil, err
	}
	return Build(dir)
}

// crdApply makes appliers of the same CRDs (several sets in one test
// binary) apply them one at a time.
var crdApply sync.Mutex

// Apply server-side-applies every object, in order, under fieldManager,
// taking over fields other managers own.
func Apply(ctx context.Context, cfg *rest.Config, fieldManager string, objs []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s/%s: %w", o.GetKind(), o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if o.GetKind() == "CustomResourceDefinition" {
			crdApply.Lock()
		}
		_, err = ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
		if o.GetKind() == "CustomResourceDefinition" {
			crdApply.Unlock()
		}
		if err != nil {
			return fmt.Errorf("apply %s/%s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// ServiceAccount is who the API server takes ServiceAccount sa of
// namespace for: its user name and groups.
func ServiceAccount(namespace, sa string) rest.ImpersonationConfig {
	return rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// AsServiceAccount returns a copy of cfg that acts as ServiceAccount sa
// of namespace through cfg's credentials.
func AsServiceAccount(cfg *rest.Config, namespace, sa string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = ServiceAccount(namespace, sa)
	return c
}

// WriteKubeconfigAs writes to dst the kubeconfig at src with every user
// acting as ServiceAccount sa of namespace, for a process the test runs.
func WriteKubeconfigAs(src, dst, namespace, sa string) error {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return err
	}
	as := ServiceAccount(namespace, sa)
	for _, user := range cfg.AuthInfos {
		user.Impersonate, user.ImpersonateGroups = as.UserName, as.Groups
	}
	return clientcmd.WriteToFile(*cfg, dst)
}
