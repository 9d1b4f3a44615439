package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// replicaSetHealth: a ReplicaSet that cannot create pods (ReplicaFailure,
// for example over quota) is Degraded; one with fewer available pods than
// desired is Progressing.
func replicaSetHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if !generationObserved(obj) {
		return Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed replica set generation less than desired generation"}
	}
	if c, ok := findCondition(obj, "ReplicaFailure"); ok && c.Status == "True" {
		return Result{Status: StatusDegraded, Message: c.Message}
	}
	available := intOr(obj, 0, "status", "availableReplicas")
	if desired, ok := intField(obj, "spec", "replicas"); ok && available < desired {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas are available...", available, desired)}
	}
	return Result{Status: StatusHealthy}
}
