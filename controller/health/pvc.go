package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// pvcHealth maps the PersistentVolumeClaim phase: Bound is Healthy, Pending
// is Progressing (waiting for a volume or for its first consumer), Lost (the
// volume is gone) is Degraded.
func pvcHealth(u *unstructured.Unstructured) Result {
	switch phase := stringField(u.Object, "status", "phase"); phase {
	case "Bound":
		return Result{Status: StatusHealthy}
	case "Pending":
		return Result{Status: StatusProgressing, Message: "Waiting for the claim to be bound"}
	case "Lost":
		return Result{Status: StatusDegraded, Message: "The claim has lost its volume"}
	default:
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("Unknown claim phase %q", phase)}
	}
}
