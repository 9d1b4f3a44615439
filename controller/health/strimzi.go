package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// strimziPauseAnnotation stops the Strimzi operator reconciling a resource.
const strimziPauseAnnotation = "strimzi.io/pause-reconciliation"

// strimziHealth judges Strimzi's kinds (kafka.strimzi.io). Paused
// reconciliation (the annotation, or the ReconciliationPaused condition),
// and a KafkaConnector whose spec.state is paused or stopped, are
// Suspended. Then, once status.observedGeneration caught up: Ready True
// is Healthy; NotReady True is Progressing while Creating and Degraded
// otherwise (its reason names the error). Warning conditions decide
// nothing.
func strimziHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if u.GetAnnotations()[strimziPauseAnnotation] == "true" {
		return Result{Status: StatusSuspended, Message: "Reconciliation is paused by the " + strimziPauseAnnotation + " annotation"}
	}
	if c, ok := conditionTrue(obj, "ReconciliationPaused"); ok {
		return Result{Status: StatusSuspended, Message: c.text()}
	}
	if state := stringField(obj, "spec", "state"); slices.Contains([]string{"paused", "stopped"}, state) {
		return Result{Status: StatusSuspended, Message: u.GetKind() + " is " + state}
	}
	if res, lagging := generationLag(obj); lagging {
		return res
	}
	if c, ok := conditionTrue(obj, "Ready"); ok {
		return Result{Status: StatusHealthy, Message: c.Message}
	}
	if c, ok := conditionTrue(obj, "NotReady"); ok {
		if c.Reason == "Creating" {
			return Result{Status: StatusProgressing, Message: c.text()}
		}
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	return readyCondition(u)
}
