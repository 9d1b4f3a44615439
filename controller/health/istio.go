package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// istioHealth judges Istio's configuration kinds (networking.istio.io,
// security.istio.io). Their status is filled only when istiod writes it
// (analysis or distribution tracking enabled), so a missing status is
// Healthy: Istio has nothing to wait for. An analysis message of level
// ERROR is Degraded; Reconciled False means the configuration has not
// reached every proxy yet (Progressing).
func istioHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	warning := ""
	for _, item := range sliceField(obj, "status", "validationMessages") {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		text := stringField(m, "type", "code") + " " + stringField(m, "type", "name")
		switch m["level"] {
		case "ERROR":
			return Result{Status: StatusDegraded, Message: text}
		case "WARNING":
			if warning == "" {
				warning = text
			}
		}
	}
	if c, ok := findCondition(obj, "Reconciled"); ok && c.Status == "False" {
		return Result{Status: StatusProgressing, Message: c.text()}
	}
	return Result{Status: StatusHealthy, Message: warning}
}
