package roles

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The ServiceAccounts of deploy/ha the controllers and API replicas run
// as when Options.ServiceAccounts is set.
const (
	controllerAccount = "graphcd-controller"
	serverAccount     = "graphcd-server"
)

// identityKinds are the objects of deploy/ha that give its roles their
// identity, rights and API priority; the rest (workloads, Services,
// NetworkPolicies) the processes replace.
var identityKinds = map[string]bool{
	"ServiceAccount": true, "Role": true, "RoleBinding": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "FlowSchema": true,
}

// applyIdentities applies deploy/ha's ServiceAccounts, RBAC and FlowSchema
// in the installation's namespace and writes, for the controller's and
// the API server's ServiceAccount, a kubeconfig that acts as it through
// the admin's credentials. It returns the kubeconfigs by ServiceAccount.
func (in *Installation) applyIdentities(ctx context.Context) (map[string]string, error) {
	objs, err := renderHA(in.LogDir, in.Namespace)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(in.Cluster.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(in.Cluster.Client.Discovery()))
	for _, o := range objs {
		if !identityKinds[o.GetKind()] {
			continue
		}
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", o.GetKind(), o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(in.Namespace)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: "graphcd-harness", Force: true}); err != nil {
			return nil, fmt.Errorf("apply %s/%s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	kubeconfigs := map[string]string{}
	for _, sa := range []string{controllerAccount, serverAccount} {
		cfg, err := clientcmd.LoadFromFile(in.Cluster.Kubeconfig)
		if err != nil {
			return nil, err
		}
		for _, user := range cfg.AuthInfos {
			user.Impersonate = "system:serviceaccount:" + in.Namespace + ":" + sa
			user.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + in.Namespace, "system:authenticated"}
		}
		path := filepath.Join(in.LogDir, sa+".kubeconfig")
		if err := clientcmd.WriteToFile(*cfg, path); err != nil {
			return nil, err
		}
		kubeconfigs[sa] = path
	}
	return kubeconfigs, nil
}

// renderHA builds deploy/ha as `kubectl apply -k` would, moved to
// namespace by an overlay written under dir.
func renderHA(dir, namespace string) ([]*unstructured.Unstructured, error) {
	overlay := filepath.Join(dir, "ha-overlay")
	if err := os.MkdirAll(overlay, 0o750); err != nil {
		return nil, err
	}
	// kustomize takes no absolute paths: the base relative to the overlay.
	base, err := filepath.Rel(overlay, filepath.Join(localcluster.RepoRoot(), "deploy", "ha"))
	if err != nil {
		return nil, err
	}
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\nresources:\n- %s\n", namespace, base)
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(k), 0o600); err != nil {
		return nil, err
	}
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), overlay)
	if err != nil {
		return nil, fmt.Errorf("kustomize build deploy/ha: %w", err)
	}
	var out []*unstructured.Unstructured
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
