package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Cluster API (cluster.x-k8s.io). Its v1beta1 conditions carry a severity:
// a False condition of severity Error is a failure, Warning or Info a
// step still under way. status.phase Failed, with failureMessage, is
// final; spec.paused stops reconciling.

// capiHealth is the part Cluster, Machine, MachineSet and
// MachineDeployment share: paused, failed, spec not yet observed, then the
// condition ready (Ready in v1beta1, Available as v1beta2 adds).
func capiHealth(u *unstructured.Unstructured) (Result, bool) {
	obj := u.Object
	if boolField(obj, "spec", "paused") {
		return Result{Status: StatusSuspended, Message: u.GetKind() + " is paused"}, true
	}
	if stringField(obj, "status", "phase") == "Failed" || stringField(obj, "status", "failureReason") != "" {
		msg := stringField(obj, "status", "failureMessage")
		if msg == "" {
			msg = stringField(obj, "status", "failureReason")
		}
		return Result{Status: StatusDegraded, Message: msg}, true
	}
	if res, lagging := generationLag(obj); lagging {
		return res, true
	}
	for _, typ := range []string{"Ready", "Available"} {
		raw := rawCondition(obj, typ)
		if raw == nil {
			continue
		}
		c := toCondition(raw)
		switch {
		case c.Status == "True":
			return Result{}, false
		case c.Status == "False" && raw["severity"] == "Error":
			return Result{Status: StatusDegraded, Message: c.text()}, true
		}
		return Result{Status: StatusProgressing, Message: c.text()}, true
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the Ready condition"}, true
}

// capiClusterHealth: Healthy once Ready (or Available) is True.
func capiClusterHealth(u *unstructured.Unstructured) Result {
	if res, decided := capiHealth(u); decided {
		return res
	}
	return Result{Status: StatusHealthy, Message: stringField(u.Object, "status", "phase")}
}

// machineHealth: Healthy once Ready and in phase Running.
func machineHealth(u *unstructured.Unstructured) Result {
	if res, decided := capiHealth(u); decided {
		return res
	}
	if phase := stringField(u.Object, "status", "phase"); phase != "Running" {
		return Result{Status: StatusProgressing, Message: "Machine is " + phase}
	}
	return Result{Status: StatusHealthy}
}

// machineReplicasHealth judges a MachineSet or MachineDeployment: ready
// as capiHealth says, then every desired machine updated and ready.
func machineReplicasHealth(u *unstructured.Unstructured) Result {
	if res, decided := capiHealth(u); decided {
		return res
	}
	obj := u.Object
	want := intOr(obj, 1, "spec", "replicas")
	ready := intOr(obj, 0, "status", "readyReplicas")
	updated := intOr(obj, want, "status", "updatedReplicas")
	switch {
	case updated < want:
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for rollout to finish: %d of %d machines updated", updated, want)}
	case ready < want:
		return Result{Status: StatusProgressing, Message: fmt.Sprintf("Waiting for %d of %d machines to be ready", want-ready, want)}
	}
	return Result{Status: StatusHealthy}
}

// machineHealthCheckHealth: RemediationAllowed False means more machines
// are unhealthy than maxUnhealthy lets it remediate (Degraded); fewer
// healthy machines than expected means remediation is under way.
func machineHealthCheckHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if c, ok := findCondition(obj, "RemediationAllowed"); ok && c.Status == "False" {
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	expected, ok := intField(obj, "status", "expectedMachines")
	if !ok {
		return Result{Status: StatusProgressing, Message: "Waiting for the controller to count the machines"}
	}
	healthy := intOr(obj, 0, "status", "currentHealthy")
	msg := fmt.Sprintf("%d of %d machines healthy", healthy, expected)
	if healthy < expected {
		return Result{Status: StatusProgressing, Message: msg}
	}
	return Result{Status: StatusHealthy, Message: msg}
}
