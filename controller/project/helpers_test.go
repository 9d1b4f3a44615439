package project

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// newProject returns a project named team-a with spec.
func newProject(spec v1alpha1.AppProjectSpec) *v1alpha1.AppProject {
	return &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "team-a", Namespace: "graphcd"}, Spec: spec}
}

// mustCompile compiles a project named team-a with spec.
func mustCompile(t testing.TB, spec v1alpha1.AppProjectSpec) *Rules {
	t.Helper()
	r, err := Compile(newProject(spec))
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return r
}

// checkDecision fails unless err is nil when want is "", or a
// *DeniedError whose message is want (or contains it, when want starts
// with "~").
func checkDecision(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
		return
	}
	var d *DeniedError
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a *DeniedError %q", err, want)
	}
	if d.Project != "team-a" {
		t.Errorf("DeniedError.Project = %q, want team-a", d.Project)
	}
	if sub, ok := strings.CutPrefix(want, "~"); ok {
		if !strings.Contains(d.Message, sub) {
			t.Errorf("message %q does not contain %q", d.Message, sub)
		}
		return
	}
	if d.Message != want {
		t.Errorf("message:\n got %s\nwant %s", d.Message, want)
	}
}

// gk is a GroupKind literal.
func gk(group, kind string) metav1.GroupKind { return metav1.GroupKind{Group: group, Kind: kind} }
