package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// cronJobHealth judges a CronJob by its last run: Healthy when the last
// scheduled run succeeded (lastSuccessfulTime is not before
// lastScheduleTime), Progressing while a run is active, Degraded when the
// last run ended without success. A suspended CronJob is Suspended and one
// never scheduled is Healthy.
func cronJobHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if boolField(obj, "spec", "suspend") {
		return Result{Status: StatusSuspended, Message: "CronJob is suspended"}
	}
	scheduled, ok := timeField(obj, "status", "lastScheduleTime")
	if !ok {
		return Result{Status: StatusHealthy, Message: "The CronJob has not been scheduled yet"}
	}
	active := len(sliceField(obj, "status", "active")) > 0
	succeeded, hasSuccess := timeField(obj, "status", "lastSuccessfulTime")
	switch {
	case hasSuccess && !succeeded.Before(scheduled):
		return Result{Status: StatusHealthy, Message: "The last run of the CronJob succeeded"}
	case active && !hasSuccess:
		return Result{Status: StatusProgressing, Message: "The first run of the CronJob is in progress"}
	case active:
		return Result{Status: StatusProgressing, Message: "A run of the CronJob is in progress"}
	default:
		return Result{Status: StatusDegraded, Message: "The last run of the CronJob did not succeed"}
	}
}
