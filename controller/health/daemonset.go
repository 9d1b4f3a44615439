package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// daemonSetHealth follows `kubectl rollout status` for DaemonSets: every node
// that should run the daemon runs the new template and the pod is available.
// With the OnDelete strategy nothing rolls out by itself, so an observed spec
// is enough.
func daemonSetHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if !generationObserved(obj) {
		return Result{Status: StatusProgressing, Message: "Waiting for rollout to finish: observed daemon set generation less than desired generation"}
	}
	desired := intOr(obj, 0, "status", "desiredNumberScheduled")
	updated := intOr(obj, 0, "status", "updatedNumberScheduled")
	if stringField(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		return Result{Status: StatusHealthy, Message: fmt.Sprintf("daemon set %d out of %d new pods have been updated", updated, desired)}
	}
	if updated < desired {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d out of %d new pods have been updated...", u.GetName(), updated, desired)}
	}
	if available := intOr(obj, 0, "status", "numberAvailable"); available < desired {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for daemon set %q rollout to finish: %d of %d updated pods are available...", u.GetName(), available, desired)}
	}
	return Result{Status: StatusHealthy}
}
