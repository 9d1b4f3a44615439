package health

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CloudNativePG (postgresql.cnpg.io).

// cnpgHibernation is the condition CloudNativePG sets on a Cluster
// hibernated with the cnpg.io/hibernation annotation.
const cnpgHibernation = "cnpg.io/hibernation"

// CloudNativePG's documented Cluster phases that need a person.
var cnpgFailedPhases = []string{
	"Cluster is in an unrecoverable state, needs manual intervention",
	"Waiting for user action",
	"Unable to create required cluster objects",
}

// cnpgClusterHealth: hibernated is Suspended; status.phase "Cluster in
// healthy state" Healthy; a phase that needs a person (above, or one that
// says the cluster cannot proceed) Degraded; every other phase (setting
// up, creating a replica, switchover, upgrade ...) Progressing.
func cnpgClusterHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	if c, ok := conditionTrue(obj, cnpgHibernation); ok {
		return Result{Status: StatusSuspended, Message: c.text()}
	}
	phase := stringField(obj, "status", "phase")
	msg := phase
	if reason := stringField(obj, "status", "phaseReason"); reason != "" {
		msg = phase + ": " + reason
	}
	switch {
	case phase == "":
		return Result{Status: StatusProgressing, Message: "Waiting for the operator to report a phase"}
	case phase == "Cluster in healthy state":
		return Result{Status: StatusHealthy, Message: msg}
	case strings.HasPrefix(phase, "Cluster cannot"), slices.Contains(cnpgFailedPhases, phase):
		return Result{Status: StatusDegraded, Message: msg}
	}
	return Result{Status: StatusProgressing, Message: msg}
}

// cnpgBackupHealth reads a Backup's status.phase: completed is Healthy,
// failed and walArchivingFailing Degraded, the rest (pending, started,
// running, finalizing) on the way.
var cnpgBackupHealth = phaseRule{
	path:     []string{"status", "phase"},
	message:  []string{"status", "error"},
	healthy:  []string{"completed"},
	degraded: []string{"failed", "walArchivingFailing"},
}.check

// cnpgScheduledBackupHealth: a schedule is Healthy unless spec.suspend.
func cnpgScheduledBackupHealth(u *unstructured.Unstructured) Result {
	if boolField(u.Object, "spec", "suspend") {
		return Result{Status: StatusSuspended, Message: "ScheduledBackup is suspended"}
	}
	if last := stringField(u.Object, "status", "lastScheduleTime"); last != "" {
		return Result{Status: StatusHealthy, Message: "Last backup scheduled at " + last}
	}
	return Result{Status: StatusHealthy}
}
