package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceHealth: a Service of type LoadBalancer is Progressing until the
// cloud provider has published it in status.loadBalancer.ingress; every
// other Service is Healthy.
func serviceHealth(u *unstructured.Unstructured) Result {
	if stringField(u.Object, "spec", "type") != "LoadBalancer" {
		return Result{Status: StatusHealthy}
	}
	if loadBalancerPublished(u.Object) {
		return Result{Status: StatusHealthy}
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the load balancer to get an address"}
}

// loadBalancerPublished reports whether status.loadBalancer.ingress lists
// at least one entry. An entry counts whatever it holds: some providers and
// ingress controllers publish entries with neither ip nor hostname (only
// ports, or nothing), and Argo CD takes the list's length as the sign that
// the load balancer exists, so that those objects do not stay Progressing
// for ever. Service and Ingress share this rule.
func loadBalancerPublished(obj map[string]any) bool {
	return len(sliceField(obj, "status", "loadBalancer", "ingress")) > 0
}
