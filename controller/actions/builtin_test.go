package actions

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Discovery lists each kind's built-in actions and disables those that do
// not apply to the object as it is.
func TestBuiltinDiscover(t *testing.T) {
	e, objs := newEngine(t), objects(t)
	type row struct {
		Name     string
		Disabled bool
		Params   []Param
	}
	for _, tc := range []struct {
		object string
		want   []row
	}{
		{"web", []row{{Name: "pause"}, {Name: "restart"}, {Name: "resume", Disabled: true}, {Name: "scale", Params: []Param{{Name: "replicas", Type: "integer", Default: "2"}}}}},
		{"paused", []row{{Name: "pause", Disabled: true}, {Name: "restart", Disabled: true}, {Name: "resume"}, {Name: "scale", Params: []Param{{Name: "replicas", Type: "integer", Default: "1"}}}}},
		{"db", []row{{Name: "restart"}, {Name: "scale", Params: []Param{{Name: "replicas", Type: "integer", Default: "1"}}}}},
		{"agent", []row{{Name: "restart"}}},
		{"report", []row{{Name: "create-job"}, {Name: "resume", Disabled: true}, {Name: "suspend"}}},
		{"suspended", []row{{Name: "create-job", Disabled: true}, {Name: "resume"}, {Name: "suspend", Disabled: true}}},
		{"settings", nil},
	} {
		got, err := e.Discover(t.Context(), objs[tc.object])
		if err != nil {
			t.Fatalf("%s: %v", tc.object, err)
		}
		var rows []row
		for _, a := range got {
			rows = append(rows, row{Name: a.Name, Disabled: a.Disabled, Params: a.Params})
		}
		if diff := cmp.Diff(rows, tc.want); diff != "" {
			t.Errorf("%s: actions (-got +want):\n%s", tc.object, diff)
		}
	}
}

// Each built-in action patches only what it documents.
func TestBuiltinRun(t *testing.T) {
	e, objs := newEngine(t), objects(t)
	for _, tc := range []struct {
		object, action string
		params         map[string]string
		want           string // the merge patch
	}{
		{"web", "restart", nil, `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-01T12:30:00Z"}}}}}`},
		{"web", "scale", map[string]string{"replicas": "5"}, `{"spec":{"replicas":5}}`},
		{"web", "scale", nil, `{}`}, // the default is the current count
		{"web", "pause", nil, `{"spec":{"paused":true}}`},
		{"paused", "resume", nil, `{"spec":{"paused":false}}`},
		{"db", "restart", nil, `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-01T12:30:00Z"}}}}}`},
		{"db", "scale", map[string]string{"replicas": "0"}, `{"spec":{"replicas":0}}`},
		{"agent", "restart", nil, `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-03-01T12:30:00Z"}}}}}`},
		{"report", "suspend", nil, `{"spec":{"suspend":true}}`},
		{"suspended", "resume", nil, `{"spec":{"suspend":false}}`},
	} {
		changes, err := e.Run(t.Context(), objs[tc.object], tc.action, tc.params)
		if err != nil {
			t.Errorf("%s %s: %v", tc.object, tc.action, err)
			continue
		}
		if len(changes) != 1 || changes[0].Operation != OperationPatch || string(changes[0].Patch) != tc.want {
			t.Errorf("%s %s: changes %+v, want one patch %s", tc.object, tc.action, changes, tc.want)
		}
	}
}

// create-job builds the Job kubectl would, owned by the CronJob, and
// leaves the CronJob alone.
func TestBuiltinCreateJob(t *testing.T) {
	e, objs := newEngine(t), objects(t)
	changes, err := e.Run(t.Context(), objs["report"], "create-job", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Operation != OperationCreate || changes[0].Patch != nil {
		t.Fatalf("changes %+v, want one create", changes)
	}
	want := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata": map[string]any{
			"name":        "report-mm7q9jk0",
			"namespace":   "shop",
			"labels":      map[string]any{"app": "report"},
			"annotations": map[string]any{"team": "billing", "cronjob.kubernetes.io/instantiate": "manual"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "batch/v1", "kind": "CronJob", "name": "report", "uid": "22222222-2222-2222-2222-222222222222",
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{
			"backoffLimit": int64(2),
			"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "report", "image": "busybox", "command": []any{"sh", "-c", "date"}}},
			}},
		},
	}
	if diff := cmp.Diff(changes[0].Object.Object, want); diff != "" {
		t.Errorf("job (-got +want):\n%s", diff)
	}
}
