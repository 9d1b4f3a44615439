package sync

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestGeneratedFrom(t *testing.T) {
	long := "a-very-long-generate-name-prefix-that-goes-past-the-limit-of-58-"
	for _, tc := range []struct {
		name, generateName string
		want               bool
	}{
		{"job-x7k2p", "job-", true},
		{"job-a-x7k2p", "job-", false},
		{"job-a-x7k2p", "job-a-", true},
		{"job-x7k2", "job-", false},
		{"job-x7k2pq", "job-", false},
		{"other-x7k2p", "job-", false},
		{long[:58] + "bcdfg", long, true},
	} {
		if got := generatedFrom(tc.name, tc.generateName); got != tc.want {
			t.Errorf("generatedFrom(%q, %q) = %v, want %v", tc.name, tc.generateName, got, tc.want)
		}
	}
}

func TestResultOfMatchesPendingGenerateName(t *testing.T) {
	task := &Task{Phase: PhasePreSync, Group: "batch", Kind: "Job", Namespace: "shop", GenerateName: "migrate-", HookType: HookPreSync}
	base := v1alpha1.ResourceResult{Group: "batch", Kind: "Job", Namespace: "shop", HookType: v1alpha1.HookType(HookPreSync), SyncPhase: v1alpha1.SyncPhasePreSync}
	for _, tc := range []struct {
		what string
		edit func(*v1alpha1.ResourceResult)
		want bool
	}{
		{"pending", func(*v1alpha1.ResourceResult) {}, true},
		{"created", func(r *v1alpha1.ResourceResult) { r.Name, r.HookPhase = "migrate-abcde", v1alpha1.OperationRunning }, true},
		{"other phase", func(r *v1alpha1.ResourceResult) { r.SyncPhase = v1alpha1.SyncPhaseSync }, false},
		{"unnamed but run", func(r *v1alpha1.ResourceResult) { r.HookPhase = v1alpha1.OperationFailed }, false},
	} {
		r := base
		tc.edit(&r)
		if got := resultOf(task, &r); got != tc.want {
			t.Errorf("%s: resultOf = %v, want %v", tc.what, got, tc.want)
		}
	}
}

func TestThreeWayPatch(t *testing.T) {
	for _, tc := range []struct {
		what                        string
		gvk                         schema.GroupVersionKind
		original, modified, current string
		want                        string
	}{
		{
			"built-in type drops a removed key",
			schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			`{"data":{"a":"1","b":"2"}}`, `{"data":{"a":"1"}}`, `{"data":{"a":"1","b":"2","c":"3"}}`,
			`{"data":{"b":null}}`,
		},
		{
			"no previous apply keeps what others set",
			schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			``, `{"data":{"a":"1"}}`, `{"data":{"a":"1","c":"3"}}`,
			`{}`,
		},
		{
			"custom resource gets a JSON merge patch",
			schema.GroupVersionKind{Group: "shop.example.com", Version: "v1", Kind: "Coupon"},
			`{"spec":{"a":1,"b":2}}`, `{"spec":{"a":2}}`, `{"spec":{"a":1,"b":2}}`,
			`{"spec":{"a":2,"b":null}}`,
		},
	} {
		patch, _, err := threeWayPatch(tc.gvk, []byte(tc.original), []byte(tc.modified), []byte(tc.current))
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		if string(patch) != tc.want {
			t.Errorf("%s: patch %s, want %s", tc.what, patch, tc.want)
		}
	}
}

// The wave delay holds a group back once, then lets it through after the
// delay; a restart (a new gate) waits the delay again.
func TestWaveGate(t *testing.T) {
	now := time.Unix(1000, 0)
	e := &Executor{cfg: Config{WaveDelay: 2 * time.Second, Now: func() time.Time { return now }}, gates: map[string]gate{}}
	s := &step{e: e, run: Run{ID: "op"}, st: &v1alpha1.OperationState{}}
	if left, open := s.gateOpen("Sync wave 1"); open || left != 2*time.Second {
		t.Fatalf("first look: open %v, left %v", open, left)
	}
	now = now.Add(time.Second)
	if left, open := s.gateOpen("Sync wave 1"); open || left != time.Second {
		t.Fatalf("after 1s: open %v, left %v", open, left)
	}
	now = now.Add(time.Second)
	if _, open := s.gateOpen("Sync wave 1"); !open {
		t.Fatal("after the delay the gate is still closed")
	}
	if _, open := s.gateOpen("Sync wave 2"); open {
		t.Fatal("the next group went through without its delay")
	}
}
