package health

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// hpaConditionsAnnotation is where autoscaling/v1 serves the conditions that
// autoscaling/v2 has in status.conditions.
const hpaConditionsAnnotation = "autoscaling.alpha.kubernetes.io/conditions"

// hpaHealth judges a HorizontalPodAutoscaler (v1 or v2) by its conditions:
//   - AbleToScale False (it cannot read or update the scale subresource) and
//     ScalingActive False for any reason but ScalingDisabled (metrics cannot
//     be read, the selector is invalid) are Degraded;
//   - ScalingActive False with ScalingDisabled (the target is scaled to zero)
//     is Suspended;
//   - AbleToScale and ScalingActive True are Healthy; ScalingLimited True only
//     adds to the message (the desired count was clamped to min or max);
//   - no conditions yet is Progressing.
func hpaHealth(u *unstructured.Unstructured) Result {
	conds := hpaConditions(u)
	if len(conds) == 0 {
		return Result{Status: StatusProgressing, Message: "Waiting to autoscale"}
	}
	var able, active, limited *condition
	for i := range conds {
		switch conds[i].Type {
		case "AbleToScale":
			able = &conds[i]
		case "ScalingActive":
			active = &conds[i]
		case "ScalingLimited":
			limited = &conds[i]
		}
	}
	if able != nil && able.Status == "False" {
		return Result{Status: StatusDegraded, Message: conditionMessage(able)}
	}
	if active != nil && active.Status == "False" {
		if active.Reason == "ScalingDisabled" {
			return Result{Status: StatusSuspended, Message: conditionMessage(active)}
		}
		return Result{Status: StatusDegraded, Message: conditionMessage(active)}
	}
	if able != nil && able.Status == "True" && (active == nil || active.Status == "True") {
		if limited != nil && limited.Status == "True" {
			return Result{Status: StatusHealthy, Message: conditionMessage(limited)}
		}
		return Result{Status: StatusHealthy, Message: conditionMessage(able)}
	}
	return Result{Status: StatusProgressing, Message: "Waiting to autoscale"}
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

// hpaConditions reads status.conditions (v2) or, failing that, the v1
// conditions annotation.
func hpaConditions(u *unstructured.Unstructured) []condition {
	var out []condition
	for _, item := range sliceField(u.Object, "status", "conditions") {
		if c, ok := item.(map[string]any); ok {
			out = append(out, toCondition(c))
		}
	}
	if len(out) > 0 {
		return out
	}
	raw := stringField(u.Object, "metadata", "annotations", hpaConditionsAnnotation)
	if raw == "" {
		return nil
	}
	var list []struct {
		Type    string `json:"type"`
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(raw), &list); err != nil {
		return nil
	}
	for _, c := range list {
		out = append(out, condition(c))
	}
	return out
}
