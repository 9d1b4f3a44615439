package apiserver

import (
	"context"
	"fmt"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/graphcd/graphcd/config/crd"
)

// KubeReadiness returns a ReadyFunc that reports ready when the Kubernetes
// API answers GET /version and every graphcd CRD is Established.
func KubeReadiness(c apiextensionsclientset.Interface) ReadyFunc {
	return func(ctx context.Context) error {
		if err := c.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
			return fmt.Errorf("kubernetes API unreachable: %w", err)
		}
		return crd.Established(ctx, c) // "crd applications.graphcd.io not established: ..."
	}
}
