//go:build integration

package controller_test

import (
	"os"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An app whose repository cannot be read shows a ComparisonError and is
// compared again soon after the repository is back, not at its next
// periodic refresh (an hour in these tests).
func TestComparisonErrorRetried(t *testing.T) {
	t.Parallel()
	var away, dir string
	_, _, app := newAppWith(t, "retried", map[string]string{"app/cm.yaml": configMap("DEST", "retried", "a")}, func(a *v1alpha1.Application) {
		dir = strings.TrimPrefix(a.Spec.Source.RepoURL, "file://")
		away = dir + ".away"
		if err := os.Rename(dir, away); err != nil {
			t.Fatal(err)
		}
	})
	hasError := func(s *v1alpha1.ApplicationStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError {
				return true
			}
		}
		return false
	}
	waitStatus(t, app.Name, "showed a ComparisonError", hasError)
	if err := os.Rename(away, dir); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, app.Name, "compared again once its repository was back", func(s *v1alpha1.ApplicationStatus) bool {
		return !hasError(s) && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
}
