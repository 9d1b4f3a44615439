package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ingressHealth: an Ingress is Progressing until its controller has
// published an entry in status.loadBalancer.ingress (see
// loadBalancerPublished).
func ingressHealth(u *unstructured.Unstructured) Result {
	if loadBalancerPublished(u.Object) {
		return Result{Status: StatusHealthy}
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the ingress controller to publish an address"}
}
