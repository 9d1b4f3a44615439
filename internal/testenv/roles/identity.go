package roles

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/internal/testenv/install"
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
	overlay := filepath.Join(in.LogDir, "ha-overlay")
	if err := os.MkdirAll(overlay, 0o750); err != nil {
		return nil, err
	}
	objs, err := install.BuildInto(overlay, filepath.Join(localcluster.RepoRoot(), "deploy", "ha"), in.Namespace, "")
	if err != nil {
		return nil, err
	}
	objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool { return !identityKinds[o.GetKind()] })
	if err := install.Apply(ctx, in.Cluster.Config, "graphcd-harness", objs); err != nil {
		return nil, err
	}
	kubeconfigs := map[string]string{}
	for _, sa := range []string{controllerAccount, serverAccount} {
		path := filepath.Join(in.LogDir, sa+".kubeconfig")
		if err := install.WriteKubeconfigAs(in.Cluster.Kubeconfig, path, in.Namespace, sa); err != nil {
			return nil, err
		}
		kubeconfigs[sa] = path
	}
	return kubeconfigs, nil
}
