package health

import (
	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Status is the health of one resource or of a whole application. Its
// values are the ones Argo CD uses and api/v1alpha1 stores.
type Status = v1alpha1.HealthStatusCode

// The health statuses, from most to least healthy as Aggregate ranks them.
const (
	StatusHealthy     = v1alpha1.HealthStatusHealthy
	StatusSuspended   = v1alpha1.HealthStatusSuspended
	StatusProgressing = v1alpha1.HealthStatusProgressing
	StatusMissing     = v1alpha1.HealthStatusMissing
	StatusDegraded    = v1alpha1.HealthStatusDegraded
	StatusUnknown     = v1alpha1.HealthStatusUnknown
)

// Result is the assessed health of one resource, with a message meant for
// people (it may be empty).
type Result struct {
	Status  Status
	Message string
}

// rank orders statuses from best (0) to worst. A status that is not one of
// the six known ones ranks as Unknown, so garbage can never look healthy.
func rank(s Status) int {
	switch s {
	case StatusHealthy:
		return 0
	case StatusSuspended:
		return 1
	case StatusProgressing:
		return 2
	case StatusMissing:
		return 3
	case StatusDegraded:
		return 4
	default:
		return 5
	}
}

// Valid reports whether s is one of the six health statuses.
func Valid(s Status) bool {
	switch s {
	case StatusHealthy, StatusSuspended, StatusProgressing, StatusMissing, StatusDegraded, StatusUnknown:
		return true
	}
	return false
}

// Worse reports whether a is less healthy than b, in the order
// Healthy < Suspended < Progressing < Missing < Degraded < Unknown.
// An unrecognised status counts as Unknown.
func Worse(a, b Status) bool {
	return rank(a) > rank(b)
}

// Aggregate returns the health of an application made of results: the worst
// of them, or Healthy when there are none.
func Aggregate(results []Result) Status {
	worst := StatusHealthy
	for _, r := range results {
		if Worse(r.Status, worst) {
			worst = r.Status
		}
	}
	if !Valid(worst) {
		return StatusUnknown
	}
	return worst
}
