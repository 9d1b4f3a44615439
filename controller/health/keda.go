package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// kedaHealth judges KEDA's ScaledObject and ScaledJob (keda.sh): Paused
// True (the autoscaling.keda.sh/paused annotations) is Suspended; Fallback
// True means the scalers fail and KEDA holds the fallback replica count,
// Degraded; otherwise Ready decides.
func kedaHealth(u *unstructured.Unstructured) Result {
	if c, ok := conditionTrue(u.Object, "Paused"); ok {
		return Result{Status: StatusSuspended, Message: c.text()}
	}
	if c, ok := conditionTrue(u.Object, "Fallback"); ok {
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	return readyCondition(u)
}
