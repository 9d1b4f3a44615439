package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ingressHealth: an Ingress is Progressing until its controller has published
// a load balancer address in status.loadBalancer.ingress.
func ingressHealth(u *unstructured.Unstructured) Result {
	if hasLoadBalancerAddress(u.Object) {
		return Result{Status: StatusHealthy}
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the ingress controller to publish an address"}
}
