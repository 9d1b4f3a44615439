package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// prometheusOperatorHealth judges Prometheus, PrometheusAgent,
// Alertmanager and ThanosRuler (monitoring.coreos.com). spec.paused stops
// the operator (Suspended). Reconciled False means the operator cannot
// apply the spec (Degraded). Available is True when every pod is ready,
// Degraded when only some are (Progressing: the pods themselves show what
// is wrong) and False when none is (Degraded).
func prometheusOperatorHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if boolField(obj, "spec", "paused") {
		return Result{Status: StatusSuspended, Message: u.GetKind() + " is paused"}
	}
	gen := intOr(obj, 0, "metadata", "generation")
	for _, typ := range []string{"Reconciled", "Available"} {
		if raw := rawCondition(obj, typ); raw != nil {
			if g, ok := toInt(raw["observedGeneration"]); ok && g < gen {
				return Result{Status: StatusProgressing, Message: "Waiting for the operator to observe the latest generation"}
			}
		}
	}
	if c, ok := findCondition(obj, "Reconciled"); ok && c.Status == "False" {
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	c, ok := findCondition(obj, "Available")
	switch {
	case !ok:
		return Result{Status: StatusProgressing, Message: "Waiting for the Available condition"}
	case c.Status == "True":
		return Result{Status: StatusHealthy, Message: c.Message}
	case c.Status == "False":
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	return Result{Status: StatusProgressing, Message: c.text()}
}
