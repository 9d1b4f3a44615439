package appset

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An Application as generated needs no write; each kind of difference
// does, except the preserved and ignored fields.
func TestUpdated(t *testing.T) {
	t.Parallel()
	set := &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", UID: "uid-1"}}
	set.Spec.PreservedFields = &v1alpha1.ApplicationPreservedFields{Labels: []string{"kept"}}
	generated := func() *v1alpha1.Application {
		return &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"env": "prod"}},
			Spec: v1alpha1.ApplicationSpec{Project: "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a.git", Path: "web", TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}},
		}
	}
	live := generated()
	live.OwnerReferences = []metav1.OwnerReference{ownerRef(set)}
	live.Annotations = map[string]string{v1alpha1.RefreshAnnotation: "hard"}
	live.Status.Sync.Status = v1alpha1.SyncStatusCodeSynced

	ignore, err := newIgnorer([]v1alpha1.ApplicationSetResourceIgnoreDifferences{{JSONPointers: []string{"/spec/source/targetRevision"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		edit   func(live *v1alpha1.Application)
		ignore bool
		want   string // "" for no write, else a check of the written object
	}{
		{"as generated", func(*v1alpha1.Application) {}, false, ""},
		{"a preserved label", func(a *v1alpha1.Application) { a.Labels["kept"] = "x" }, false, ""},
		{"an ignored field", func(a *v1alpha1.Application) { a.Spec.Source.TargetRevision = "v2" }, true, ""},
		{"a spec change", func(a *v1alpha1.Application) { a.Spec.Destination.Namespace = "other" }, false, "namespace web"},
		{"the field no rule ignores", func(a *v1alpha1.Application) { a.Spec.Source.TargetRevision = "v2" }, false, "revision main"},
		{"a label added by hand", func(a *v1alpha1.Application) { a.Labels["extra"] = "1" }, false, "labels map[env:prod]"},
		{"no owner reference", func(a *v1alpha1.Application) { a.OwnerReferences = nil }, false, "owner fleet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			existing := live.DeepCopy()
			tt.edit(existing)
			d := ignore
			if !tt.ignore {
				d = nil
			}
			got, err := updated(existing, generated(), set, d)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if got != nil {
					t.Fatalf("a write of %+v, want none", got.Spec)
				}
				return
			}
			if got == nil {
				t.Fatal("no write")
			}
			summary := fmt.Sprintf("namespace %s; revision %s; labels %s; owner %s",
				got.Spec.Destination.Namespace, got.Spec.Source.TargetRevision, fmtMap(got.Labels), got.OwnerReferences[0].Name)
			if !strings.Contains(summary, tt.want) {
				t.Errorf("wrote %s, want %s", summary, tt.want)
			}
			if got.Annotations[v1alpha1.RefreshAnnotation] != "hard" || got.Status.Sync.Status != v1alpha1.SyncStatusCodeSynced {
				t.Errorf("the write dropped the refresh annotation or the status: %v %v", got.Annotations, got.Status.Sync)
			}
		})
	}
}

// fmtMap prints the test's labels in a fixed order.
func fmtMap(m map[string]string) string {
	var b strings.Builder
	b.WriteString("map[")
	first := true
	for _, k := range []string{"env", "extra", "kept"} {
		if v, ok := m[k]; ok {
			if !first {
				b.WriteString(" ")
			}
			first = false
			b.WriteString(k + ":" + v)
		}
	}
	b.WriteString("]")
	return b.String()
}

// The status lists failures first, bounds the parameters it keeps, and
// keeps a condition's transition time while its status holds.
func TestStatus(t *testing.T) {
	t.Parallel()
	big := map[string]any{"blob": strings.Repeat("x", 5000)}
	p := &plan{steps: []*step{
		{entry: v1alpha1.ApplicationSetGeneratedApp{Name: "ok", Action: v1alpha1.ApplicationSetUnchanged, Params: paramsJSON(map[string]any{"n": "ok"})}},
		{entry: v1alpha1.ApplicationSetGeneratedApp{Action: v1alpha1.ApplicationSetFailed, Generator: 1, Params: paramsJSON(big), Message: "template: boom"}},
	}}
	st := status(p)
	if st.Generated[0].Action != v1alpha1.ApplicationSetFailed || len(st.Generated[0].Params) > maxParamsText+len("…") {
		t.Errorf("first entry %+v (params %d bytes), want the failure with shortened parameters", st.Generated[0].Action, len(st.Generated[0].Params))
	}
	c := st.Conditions[0]
	if c.Type != v1alpha1.ApplicationSetConditionErrorOccurred || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "1 of 2 elements failed") || !strings.Contains(c.Message, "template: boom") {
		t.Errorf("ErrorOccurred = %+v", c)
	}
	then := metav1.NewTime(metav1.Now().Add(-3600e9))
	prev := []v1alpha1.ApplicationSetCondition{{Type: c.Type, Status: c.Status, LastTransitionTime: &then}}
	keepTransitions(prev, st.Conditions)
	if !st.Conditions[0].LastTransitionTime.Equal(&then) {
		t.Errorf("transition time %v, want the earlier %v", st.Conditions[0].LastTransitionTime, then)
	}
}
