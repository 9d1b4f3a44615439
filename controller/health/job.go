package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobHealth: a Job whose Failed condition is true is Degraded, one whose
// Complete condition is true is Healthy, a suspended one (spec.suspend or
// the Suspended condition) is Suspended, and any other is still running.
func jobHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if c, ok := findCondition(obj, "Failed"); ok && c.Status == "True" {
		return Result{Status: StatusDegraded, Message: c.Message}
	}
	if c, ok := findCondition(obj, "Complete"); ok && c.Status == "True" {
		return Result{Status: StatusHealthy, Message: c.Message}
	}
	if c, ok := findCondition(obj, "Suspended"); ok && c.Status == "True" {
		msg := c.Message
		if msg == "" {
			msg = "Job is suspended"
		}
		return Result{Status: StatusSuspended, Message: msg}
	}
	if boolField(obj, "spec", "suspend") {
		return Result{Status: StatusSuspended, Message: "Job is suspended"}
	}
	return Result{Status: StatusProgressing, Message: "Job is running"}
}
