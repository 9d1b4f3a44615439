package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		name    string
		backoff *v1alpha1.Backoff
		attempt int64
		want    time.Duration
	}{
		{"defaults first", nil, 0, 5 * time.Second},
		{"defaults third", nil, 2, 20 * time.Second},
		{"defaults capped", nil, 10, 3 * time.Minute},
		{"seconds without unit", &v1alpha1.Backoff{Duration: "3"}, 1, 6 * time.Second},
		{"factor and cap", &v1alpha1.Backoff{Duration: "1s", Factor: ptr.To[int64](3), MaxDuration: "5s"}, 2, 5 * time.Second},
		{"bad duration takes the default", &v1alpha1.Backoff{Duration: "soon"}, 0, 5 * time.Second},
		{"negative attempt", nil, -1, 5 * time.Second},
	}
	for _, tt := range tests {
		if got := retryBackoff(tt.backoff, tt.attempt); got != tt.want {
			t.Errorf("%s: retryBackoff = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSelfHealBackoff(t *testing.T) {
	for n, want := range map[int64]time.Duration{0: 5 * time.Second, 1: 5 * time.Second, 2: 10 * time.Second, 3: 20 * time.Second, 20: 3 * time.Minute} {
		if got := selfHealBackoff(n); got != want {
			t.Errorf("selfHealBackoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestIsHook(t *testing.T) {
	tests := []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{hookAnnotation: "PreSync"}, true},
		{map[string]string{hookAnnotation: "Skip"}, false},
		{map[string]string{hookAnnotation: "Skip, PostSync"}, true},
		{map[string]string{helmHookAnnotation: "crd-install"}, false},
		{map[string]string{helmHookAnnotation: "pre-install"}, true},
	}
	for _, tt := range tests {
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		obj.SetAnnotations(tt.ann)
		if got := isHook(obj); got != tt.want {
			t.Errorf("isHook(%v) = %v, want %v", tt.ann, got, tt.want)
		}
	}
}

func TestAddHistoryKeepsLimit(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{RevisionHistoryLimit: ptr.To[int64](2)}}
	status := &v1alpha1.ApplicationStatus{}
	now := metav1.Now()
	for i := range 3 {
		addHistory(status, app, &v1alpha1.OperationState{
			StartedAt: now, FinishedAt: &now,
			SyncResult: &v1alpha1.SyncOperationResult{Revision: string(rune('a' + i))},
		})
	}
	if len(status.History) != 2 || status.History[0].ID != 2 || status.History[1].ID != 3 || status.History[1].Revision != "c" {
		t.Errorf("history %+v, want ids 2 and 3", status.History)
	}
}

func TestDecideAutoSync(t *testing.T) {
	now := time.Now()
	src := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/shop.git", Path: "app"}
	finished := metav1.NewTime(now.Add(-time.Second))
	last := func(phase v1alpha1.OperationPhase, rev string) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{
			Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}, Phase: phase, Message: "boom", FinishedAt: &finished,
			SyncResult: &v1alpha1.SyncOperationResult{Revision: rev, Source: src},
		}
	}
	outOfSync := &Comparison{Sync: v1alpha1.SyncStatusCodeOutOfSync, Revision: "r2", Resources: []ResourceResult{{Status: v1alpha1.SyncStatusCodeOutOfSync}}}
	onlyPrunes := &Comparison{Sync: v1alpha1.SyncStatusCodeOutOfSync, Revision: "r2", Resources: []ResourceResult{{Status: v1alpha1.SyncStatusCodeOutOfSync, RequiresPruning: true}}}
	tests := []struct {
		name    string
		auto    v1alpha1.SyncPolicyAutomated
		last    *v1alpha1.OperationState
		cmp     *Comparison
		wantOp  bool
		refusal string
		requeue bool
	}{
		{"new revision syncs", v1alpha1.SyncPolicyAutomated{Prune: true}, last(v1alpha1.OperationSucceeded, "r1"), outOfSync, true, "", false},
		{"failed revision is not synced again", v1alpha1.SyncPolicyAutomated{}, last(v1alpha1.OperationFailed, "r2"), outOfSync, false, "Failed sync attempt to r2: boom", false},
		{"drift without selfHeal", v1alpha1.SyncPolicyAutomated{}, last(v1alpha1.OperationSucceeded, "r2"), outOfSync, false, "", false},
		{"drift with selfHeal backs off", v1alpha1.SyncPolicyAutomated{SelfHeal: true}, last(v1alpha1.OperationSucceeded, "r2"), outOfSync, false, "", true},
		{"wiping out everything is refused", v1alpha1.SyncPolicyAutomated{Prune: true}, nil, onlyPrunes, false, "Skipping sync attempt to r2: auto-sync will wipe out all resources", false},
		{"allowEmpty wipes out", v1alpha1.SyncPolicyAutomated{Prune: true, AllowEmpty: true}, nil, onlyPrunes, true, "", false},
		{"prunes only without automated prune", v1alpha1.SyncPolicyAutomated{}, nil, onlyPrunes, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			auto := tt.auto
			app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &src, SyncPolicy: &v1alpha1.SyncPolicy{Automated: &auto}}}
			d := decideAutoSync(app, &v1alpha1.ApplicationStatus{OperationState: tt.last}, tt.cmp, now)
			if (d.op != nil) != tt.wantOp || d.refusal != tt.refusal || (d.requeue > 0) != tt.requeue {
				t.Errorf("decision %+v, want op %v, refusal %q, requeue %v", d, tt.wantOp, tt.refusal, tt.requeue)
			}
			if d.op != nil && (!d.op.InitiatedBy.Automated || d.op.Sync.Revision != "r2" || d.op.Sync.Prune != auto.Prune) {
				t.Errorf("operation %+v", d.op)
			}
		})
	}
}
