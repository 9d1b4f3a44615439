package health

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hpaConditionsAnnotation is where autoscaling/v1 serves the conditions that
// the later versions have in status.conditions.
const hpaConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"

// hpaWaiting is the verdict when no condition decides.
var hpaWaiting = Result{Status: StatusProgressing, Message: "Waiting to autoscale"}

// hpaHealth judges a HorizontalPodAutoscaler by its conditions, as Argo CD
// does: autoscaling/v1 by the conditions annotation, v2beta1, v2beta2 and
// v2 by status.conditions (each version by its own place only).
//
//   - Degraded when any condition is one of hpaDegraded's type and reason
//     pairs (the scale subresource or the metrics cannot be read, the
//     selector is invalid), whatever its status and wherever it is in the
//     list; the first one gives the message.
//   - Otherwise Healthy when a condition AbleToScale or ScalingLimited is
//     True; the first one gives the message. So a target scaled to zero
//     (ScalingActive False, ScalingDisabled) is Healthy, and so is
//     AbleToScale True beside a ScalingActive False whose reason is not
//     listed.
//   - Otherwise Progressing: no conditions or annotation yet, or only
//     conditions that decide nothing (AbleToScale False with a reason that
//     is not a failure, ScalingLimited False ...).
//
// An annotation that is not a JSON list of conditions, and a version of
// the API Argo CD does not know, are Unknown.
func hpaHealth(u *unstructured.Unstructured) Result {
	var conds []condition
	switch apiVersion, _ := u.Object["apiVersion"].(string); apiVersion {
	case "autoscaling/v1":
		raw, ok := mapField(u.Object, "metadata", "annotations")[hpaConditionsAnnotation].(string)
		if !ok {
			return hpaWaiting
		}
		var list []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return Result{Status: StatusUnknown, Message: fmt.Sprintf("cannot read the %s annotation: %s", hpaConditionsAnnotation, jsonProblem(err))}
		}
		conds = make([]condition, len(list))
		for i, c := range list {
			conds[i] = condition(c)
		}
	case "autoscaling/v2", "autoscaling/v2beta2", "autoscaling/v2beta1":
		items := sliceField(u.Object, "status", "conditions")
		conds = make([]condition, 0, len(items))
		for _, item := range items {
			if c, ok := item.(map[string]any); ok {
				conds = append(conds, toCondition(c))
			}
		}
	default:
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("unsupported HorizontalPodAutoscaler version %q", apiVersion)}
	}
	for i := range conds {
		if hpaDegraded(conds[i].Type, conds[i].Reason) {
			return Result{Status: StatusDegraded, Message: conditionMessage(&conds[i])}
		}
	}
	for i := range conds {
		if (conds[i].Type == "AbleToScale" || conds[i].Type == "ScalingLimited") && conds[i].Status == "True" {
			return Result{Status: StatusHealthy, Message: conditionMessage(&conds[i])}
		}
	}
	return hpaWaiting
}

// hpaDegraded reports whether a condition type and reason are among those
// Argo CD judges Degraded: the controller failed to read or update the
// target's scale, or to compute a replica count from its metrics.
func hpaDegraded(typ, reason string) bool {
	switch typ {
	case "AbleToScale":
		return reason == "FailedGetScale" || reason == "FailedUpdateScale"
	case "ScalingActive":
		switch reason {
		case "FailedGetResourceMetric", "FailedGetObjectMetric", "FailedGetPodsMetric",
			"FailedGetExternalMetric", "FailedComputeMetricsReplicas", "InvalidSelector":
			return true
		}
	}
	return false
}

// jsonProblem says what is wrong with a JSON list of conditions without
// naming Go types.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err.Error()
	}
	if typeErr.Field == "" {
		return fmt.Sprintf("want a JSON list of conditions, found %s", typeErr.Value)
	}
	return fmt.Sprintf("a condition's %s is %s, want a string", typeErr.Field, typeErr.Value)
}

func conditionMessage(c *condition) string {
	switch {
	case c.Reason != "" && c.Message != "":
		return fmt.Sprintf("%s: %s", c.Reason, c.Message)
	case c.Message != "":
		return c.Message
	default:
		return c.Reason
	}
}
