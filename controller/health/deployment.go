package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentHealth follows `kubectl rollout status`: a Deployment is healthy
// once its controller has observed the latest spec and every desired replica
// runs the new template and is available.
func deploymentHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if boolField(obj, "spec", "paused") {
		return Result{Status: StatusSuspended, Message: "Deployment is paused"}
	}
	if !generationObserved(obj) {
		return Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed deployment generation less than desired generation"}
	}
	if c, ok := findCondition(obj, "Progressing"); ok && c.Reason == "ProgressDeadlineExceeded" {
		return Result{Status: StatusDegraded, Message: fmt.Sprintf("Deployment %q exceeded its progress deadline", u.GetName())}
	}
	updated := intOr(obj, 0, "status", "updatedReplicas")
	current := intOr(obj, 0, "status", "replicas")
	available := intOr(obj, 0, "status", "availableReplicas")
	if desired, ok := intField(obj, "spec", "replicas"); ok && updated < desired {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d out of %d new replicas have been updated...", updated, desired)}
	}
	if current > updated {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d old replicas are pending termination...", current-updated)}
	}
	if available < updated {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", available, updated)}
	}
	return Result{Status: StatusHealthy}
}
