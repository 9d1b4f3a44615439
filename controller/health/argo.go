package health

import (
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Argo Rollouts and Argo Workflows (argoproj.io), from their documented
// status.phase values.

// rolloutHealth follows the phase the Rollout controller computes
// (Healthy, Progressing, Paused, Degraded), once it has seen the latest
// spec. status.observedGeneration is a string in Rollouts.
func rolloutHealth(u *unstructured.Unstructured) Result {
	gen := intOr(u.Object, 0, "metadata", "generation")
	observed, ok := intField(u.Object, "status", "observedGeneration")
	if !ok {
		n, err := strconv.ParseInt(stringField(u.Object, "status", "observedGeneration"), 10, 64)
		observed, ok = n, err == nil
	}
	if !ok || observed < gen {
		return Result{Status: StatusProgressing, Message: "Waiting for rollout spec update to be observed"}
	}
	return rolloutPhase(u)
}

var rolloutPhase = phaseRule{
	path:      []string{"status", "phase"},
	message:   []string{"status", "message"},
	healthy:   []string{"Healthy"},
	degraded:  []string{"Degraded"},
	suspended: []string{"Paused"},
}.check

// analysisPhaseHealth reads an AnalysisRun's or an Experiment's phase:
// Successful is Healthy, Failed and Error Degraded, and Inconclusive
// Suspended, since the Rollout then waits for a person to decide.
var analysisPhaseHealth = phaseRule{
	path:      []string{"status", "phase"},
	message:   []string{"status", "message"},
	healthy:   []string{"Successful"},
	degraded:  []string{"Failed", "Error"},
	suspended: []string{"Inconclusive"},
}.check

// workflowHealth: spec.suspend holds the whole workflow (Suspended);
// otherwise its phase: Succeeded, or Failed and Error, or still Pending or
// Running.
func workflowHealth(u *unstructured.Unstructured) Result {
	if boolField(u.Object, "spec", "suspend") {
		return Result{Status: StatusSuspended, Message: "Workflow is suspended"}
	}
	return workflowPhase(u)
}

var workflowPhase = phaseRule{
	path:     []string{"status", "phase"},
	message:  []string{"status", "message"},
	healthy:  []string{"Succeeded"},
	degraded: []string{"Failed", "Error"},
}.check

// cronWorkflowHealth: a CronWorkflow is a schedule, Healthy unless
// suspended or its controller reports a SubmissionError or SpecError
// condition.
func cronWorkflowHealth(u *unstructured.Unstructured) Result {
	if boolField(u.Object, "spec", "suspend") {
		return Result{Status: StatusSuspended, Message: "CronWorkflow is suspended"}
	}
	for _, typ := range []string{"SpecError", "SubmissionError"} {
		if c, ok := conditionTrue(u.Object, typ); ok {
			return Result{Status: StatusDegraded, Message: c.text()}
		}
	}
	return Result{Status: StatusHealthy}
}
