package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// statefulSetHealth follows `kubectl rollout status` for StatefulSets,
// including partitioned rolling updates (only the pods at or above the
// partition ordinal are updated) and the OnDelete strategy (pods are updated
// only when someone deletes them, so there is no rollout to wait for).
func statefulSetHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	observed := intOr(obj, 0, "status", "observedGeneration")
	if observed == 0 || !generationObserved(obj) {
		return Result{Status: StatusProgressing, Message: "Waiting for statefulset spec update to be observed..."}
	}
	desired, hasDesired := intField(obj, "spec", "replicas")
	ready := intOr(obj, 0, "status", "readyReplicas")
	if hasDesired && ready < desired {
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for %d pods to be ready...", desired-ready)}
	}
	if stringField(obj, "spec", "updateStrategy", "type") == "OnDelete" {
		return Result{Status: StatusHealthy, Message: fmt.Sprintf("statefulset has %d ready pods", ready)}
	}
	if partition, ok := intField(obj, "spec", "updateStrategy", "rollingUpdate", "partition"); ok && hasDesired {
		updated := intOr(obj, 0, "status", "updatedReplicas")
		want := max(desired-partition, 0)
		if updated < want {
			return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for partitioned roll out to finish: %d out of %d new pods have been updated...", updated, want)}
		}
		return Result{Status: StatusHealthy, Message: fmt.Sprintf("partitioned roll out complete: %d new pods have been updated...", updated)}
	}
	updateRev := stringField(obj, "status", "updateRevision")
	if updateRev != stringField(obj, "status", "currentRevision") {
		updated := intOr(obj, 0, "status", "updatedReplicas")
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("waiting for statefulset rolling update to complete %d pods at revision %s...", updated, updateRev)}
	}
	return Result{Status: StatusHealthy, Message: fmt.Sprintf("statefulset rolling update complete %d pods at revision %s...", intOr(obj, 0, "status", "currentReplicas"), updateRev)}
}
