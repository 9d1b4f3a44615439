package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// apiServiceHealth: an APIService is Healthy when its Available condition is
// true and Progressing otherwise (the aggregated server may still be
// starting).
func apiServiceHealth(u *unstructured.Unstructured) Result {
	c, ok := findCondition(u.Object, "Available")
	if !ok {
		return Result{Status: StatusProgressing, Message: "Waiting to be processed"}
	}
	if c.Status == "True" {
		return Result{Status: StatusHealthy, Message: conditionMessage(&c)}
	}
	return Result{Status: StatusProgressing, Message: conditionMessage(&c)}
}
