package sync

import (
	"strings"
	"time"
)

// AnnotationDeletionApproved, on an Application, approves pruning its
// objects marked Prune=confirm and deleting, with the application, those
// marked Delete=confirm. Its value is an RFC 3339 time; it approves what
// has waited since before that time, as Argo CD's confirmation does.
const AnnotationDeletionApproved = "argocd.argoproj.io/deletion-approved"

// DeletionApproved reports whether an Application's annotations approve
// a prune or deletion that has waited since since (a sync's start, an
// application's deletion). An unreadable value approves nothing.
func DeletionApproved(annotations map[string]string, since time.Time) bool {
	v, ok := annotations[AnnotationDeletionApproved]
	if !ok {
		return false
	}
	at, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
	return err == nil && !at.Before(since.Truncate(time.Second))
}

// awaitingConfirmation returns the first entry whose prune waits for a
// confirmation, or nil.
func awaitingConfirmation(entries []*entry) *entry {
	for _, en := range entries {
		if en.task != nil && en.task.AwaitsConfirmation {
			return en
		}
	}
	return nil
}
