package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Policy engines: Kyverno (kyverno.io) and OPA Gatekeeper
// (templates.gatekeeper.sh, constraints.gatekeeper.sh).

// kyvernoPolicyHealth: Kyverno reports a Ready condition on ClusterPolicy
// and Policy; releases before it had one set status.ready.
func kyvernoPolicyHealth(u *unstructured.Unstructured) Result {
	if rawCondition(u.Object, "Ready") == nil {
		if ready, ok := field(u.Object, "status", "ready").(bool); ok {
			if ready {
				return Result{Status: StatusHealthy}
			}
			return Result{Status: StatusProgressing, Message: "Waiting for the policy to be ready"}
		}
	}
	return readyCondition(u)
}

// gatekeeperByPod reads status.byPod, the report of each Gatekeeper pod:
// the first error, and whether every pod has seen the latest generation
// (and, for a constraint, enforces it).
func gatekeeperByPod(u *unstructured.Unstructured, needEnforced bool) (errMsg string, current bool) {
	pods := sliceField(u.Object, "status", "byPod")
	gen := intOr(u.Object, 0, "metadata", "generation")
	current = len(pods) > 0
	for _, item := range pods {
		pod, ok := item.(map[string]any)
		if !ok {
			continue
		}
		for _, e := range sliceField(pod, "errors") {
			if m, ok := e.(map[string]any); ok && errMsg == "" {
				errMsg = stringField(m, "message")
				if code := stringField(m, "code"); code != "" {
					errMsg = code + ": " + errMsg
				}
			}
		}
		if intOr(pod, 0, "observedGeneration") < gen || (needEnforced && !boolField(pod, "enforced")) {
			current = false
		}
	}
	return errMsg, current
}

// constraintTemplateHealth: Healthy once Gatekeeper has created the
// constraint's CRD (status.created) and no pod reports an error (a Rego
// that does not compile, say); an error is Degraded.
func constraintTemplateHealth(u *unstructured.Unstructured) Result {
	errMsg, current := gatekeeperByPod(u, false)
	switch {
	case errMsg != "":
		return Result{Status: StatusDegraded, Message: errMsg}
	case !boolField(u.Object, "status", "created") || !current:
		return Result{Status: StatusProgressing, Message: "Waiting for Gatekeeper to create the constraint kind"}
	}
	return Result{Status: StatusHealthy}
}

// gatekeeperConstraintHealth judges a constraint, of any kind in
// constraints.gatekeeper.sh: Healthy once every Gatekeeper pod enforces
// the latest generation, Degraded on an error. Violations are the policy
// working, not the constraint failing: they go in the message.
func gatekeeperConstraintHealth(u *unstructured.Unstructured) (Result, bool) {
	errMsg, current := gatekeeperByPod(u, true)
	switch {
	case errMsg != "":
		return Result{Status: StatusDegraded, Message: errMsg}, true
	case !current:
		return Result{Status: StatusProgressing, Message: "Waiting for Gatekeeper to enforce the constraint"}, true
	}
	if n, ok := intField(u.Object, "status", "totalViolations"); ok {
		return Result{Status: StatusHealthy, Message: fmt.Sprintf("%d violations", n)}, true
	}
	return Result{Status: StatusHealthy}, true
}
