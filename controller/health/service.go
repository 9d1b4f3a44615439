package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceHealth: a Service of type LoadBalancer is Progressing until the
// cloud provider has given it an address; every other Service is Healthy.
func serviceHealth(u *unstructured.Unstructured) Result {
	if stringField(u.Object, "spec", "type") != "LoadBalancer" {
		return Result{Status: StatusHealthy}
	}
	if hasLoadBalancerAddress(u.Object) {
		return Result{Status: StatusHealthy}
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the load balancer to get an address"}
}

// hasLoadBalancerAddress reports whether status.loadBalancer.ingress holds
// at least one entry with an IP or a hostname.
func hasLoadBalancerAddress(obj map[string]any) bool {
	for _, item := range sliceField(obj, "status", "loadBalancer", "ingress") {
		ing, _ := item.(map[string]any)
		if stringField(ing, "ip") != "" || stringField(ing, "hostname") != "" {
			return true
		}
	}
	return false
}
