//go:build integration

package controller_test

import (
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A tenant's jq path expression cannot hold the controller past its
// deadline (issue 19): the expression of the report is refused when the
// app is compared, with an InvalidSpecError naming the construct, and an
// allowed expression that would run for hours is stopped at its one-second
// deadline with a ComparisonError. Once the slow expression is replaced by
// a reasonable one, the same app compares Synced: the controller goes on.
func TestJQPathExpressionBounded(t *testing.T) {
	t.Parallel()
	const refused, slow = "jq-refused-app", "jq-slow-app"
	_, _, _ = newAppWith(t, refused, map[string]string{"app/cm.yaml": configMap("DEST", refused, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JQPathExpressions: []string{`"x" * 2e5 | [splits("")] | empty`}}}
	})
	_, dest, _ := newAppWith(t, slow, map[string]string{"app/cm.yaml": configMap("DEST", slow, "prod")}, func(a *v1alpha1.Application) {
		a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Kind: "ConfigMap", JQPathExpressions: []string{strings.Repeat(".. as $v | ", 12) + "empty"}}}
	})
	apply(t, configMap(dest, slow, "debug"))
	waitStatus(t, refused, "InvalidSpecError naming the refused operator", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionInvalidSpecError, "the operator * on a string is not allowed in a jq path expression")
	})
	app := waitStatus(t, slow, "ComparisonError naming the deadline", func(s *v1alpha1.ApplicationStatus) bool {
		return hasCondition(s, v1alpha1.ApplicationConditionComparisonError, "jq path expression timed out after 1s")
	})
	app.Spec.IgnoreDifferences[0].JQPathExpressions = []string{`.data | select(has("mode")) | .mode`}
	if err := apps.Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, slow, "Synced with the reasonable expression", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Resources) == 1 &&
			!hasCondition(s, v1alpha1.ApplicationConditionComparisonError, "")
	})
}
