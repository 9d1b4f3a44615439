package health

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applicationHealth supports the app-of-apps pattern: a graphcd.io
// Application managed by another one has the health its own controller
// recorded in status.health, as Argo CD's documented Application health
// customization does. Until that is recorded it is Progressing.
func applicationHealth(u *unstructured.Unstructured) Result {
	h := mapField(u.Object, "status", "health")
	status, _ := h["status"].(string)
	message, _ := h["message"].(string)
	if status == "" {
		return Result{Status: StatusProgressing, Message: message}
	}
	if !Valid(Status(status)) {
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("Application reports an invalid health status %q", status)}
	}
	return Result{Status: Status(status), Message: message}
}
