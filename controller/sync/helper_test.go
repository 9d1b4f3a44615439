package sync_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/graphcd/graphcd/controller/sync"
)

// load reads the objects of testdata/name.
func load(t testing.TB, name string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(data))
}

// parse decodes a YAML stream of objects; empty documents are skipped.
func parse(t testing.TB, data string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewBufferString(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// build plans desired against live and fails the test on an options error.
func build(t testing.TB, desired, live []*unstructured.Unstructured, opts sync.Options) *sync.Plan {
	t.Helper()
	plan, err := sync.Build(desired, live, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	checkOrdered(t, plan.Tasks)
	checkOrdered(t, plan.SyncFail)
	checkOrdered(t, plan.DeletionHooks)
	return plan
}

// checkOrdered asserts what an executor relies on: tasks never go back
// to an earlier phase or wave.
func checkOrdered(t testing.TB, tasks []sync.Task) {
	t.Helper()
	rank := map[sync.Phase]int{sync.PhasePreSync: 0, sync.PhaseSync: 1, sync.PhasePostSync: 2, sync.PhaseSyncFail: 3, sync.PhasePreDelete: 4, sync.PhasePostDelete: 5}
	for i := 1; i < len(tasks); i++ {
		a, b := tasks[i-1], tasks[i]
		if rank[a.Phase] > rank[b.Phase] || (a.Phase == b.Phase && a.Wave > b.Wave) {
			t.Errorf("task %d (%s) runs after task %d (%s): %s/%d before %s/%d", i, b.Ref(), i-1, a.Ref(), a.Phase, a.Wave, b.Phase, b.Wave)
		}
	}
}

// lines renders tasks one per line, "Phase Wave Kind namespace/name" and
// what sets a task apart: hook and delete policies, prune, PruneLast, the
// reason a prune is skipped, the CreateNamespace task.
func lines(tasks []sync.Task) []string {
	out := []string{}
	for _, t := range tasks {
		l := fmt.Sprintf("%s %d %s", t.Phase, t.Wave, t.Ref())
		if t.IsHook() {
			policies := make([]string, len(t.DeletePolicies))
			for i, p := range t.DeletePolicies {
				policies[i] = string(p)
			}
			l += " hook[" + strings.Join(policies, ",") + "]"
		}
		if t.Prune {
			l += " prune"
		}
		if t.PruneLast {
			l += " last"
		}
		if t.PruneSkipped != "" {
			l += " skip:" + t.PruneSkipped
		}
		if t.AwaitsConfirmation {
			l += " awaits-confirmation"
		}
		if t.CreatesNamespace {
			l += " creates-namespace"
		}
		out = append(out, l)
	}
	return out
}

// messages renders resource errors or warnings as strings.
func messages(errs []*sync.ResourceError) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func diffLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("%s (-got +want):\n%s", what, d)
	}
}
