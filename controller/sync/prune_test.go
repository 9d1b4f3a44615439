package sync_test

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// Live objects gone from Git are pruned in reverse wave order (waves 0, 1
// and 2 become 2, 1 and 0), before the applies of their wave; PruneLast
// moves prunes after the last wave; hooks are never pruned.
func TestPrune(t *testing.T) {
	tests := []struct {
		name string
		opts sync.Options
		want []string
	}{
		{
			name: "prune on",
			opts: sync.Options{Prune: true},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/old-worker prune",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 2 ConfigMap shop/keep-me prune skip:ignored (no prune)",
				"Sync 2 ConfigMap shop/was-skipped prune",
				"Sync 2 Service shop/old-svc prune",
				"Sync 3 Secret shop/old-secret prune last",
			},
		},
		{
			name: "PruneLast for the whole application",
			opts: sync.Options{Prune: true, SyncOptions: []string{"PruneLast=true"}},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 3 Secret shop/old-secret prune last",
				"Sync 3 ConfigMap shop/keep-me prune last skip:ignored (no prune)",
				"Sync 3 ConfigMap shop/old-config prune last",
				"Sync 3 ConfigMap shop/was-skipped prune last",
				"Sync 3 Service shop/old-svc prune last",
				"Sync 3 Deployment shop/old-worker prune last",
			},
		},
		{
			name: "prune off: planned, but skipped",
			opts: sync.Options{},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/old-worker prune skip:ignored (requires pruning)",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune skip:ignored (requires pruning)",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 2 ConfigMap shop/keep-me prune skip:ignored (requires pruning)",
				"Sync 2 ConfigMap shop/was-skipped prune skip:ignored (requires pruning)",
				"Sync 2 Service shop/old-svc prune skip:ignored (requires pruning)",
				"Sync 3 Secret shop/old-secret prune last skip:ignored (requires pruning)",
			},
		},
		{
			name: "Prune=false for the application",
			opts: sync.Options{Prune: true, SyncOptions: []string{"Prune=false"}},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/old-worker prune skip:ignored (no prune)",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune skip:ignored (no prune)",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 2 ConfigMap shop/keep-me prune skip:ignored (no prune)",
				"Sync 2 ConfigMap shop/was-skipped prune skip:ignored (no prune)",
				"Sync 2 Service shop/old-svc prune skip:ignored (no prune)",
				"Sync 3 Secret shop/old-secret prune last skip:ignored (no prune)",
			},
		},
		{
			name: "Prune=confirm waits for the approval; Prune=false on an object still wins",
			opts: sync.Options{Prune: true, SyncOptions: []string{"Prune=confirm"}},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/old-worker prune awaits-confirmation",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune awaits-confirmation",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 2 ConfigMap shop/keep-me prune skip:ignored (no prune)",
				"Sync 2 ConfigMap shop/was-skipped prune awaits-confirmation",
				"Sync 2 Service shop/old-svc prune awaits-confirmation",
				"Sync 3 Secret shop/old-secret prune last awaits-confirmation",
			},
		},
		{
			name: "Prune=confirm, approved",
			opts: sync.Options{Prune: true, SyncOptions: []string{"Prune=confirm"}, PruneApproved: true},
			want: []string{
				"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
				"Sync 0 Deployment shop/old-worker prune",
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune",
				"Sync 1 ConfigMap shop/web-config",
				"Sync 2 ConfigMap shop/keep-me prune skip:ignored (no prune)",
				"Sync 2 ConfigMap shop/was-skipped prune",
				"Sync 2 Service shop/old-svc prune",
				"Sync 3 Secret shop/old-secret prune last",
			},
		},
		{
			name: "selective sync prunes only selected resources and runs no hooks",
			opts: sync.Options{Prune: true, Resources: []v1alpha1.SyncOperationResource{
				{Group: "apps", Kind: "Deployment", Name: "web"},
				{Kind: "ConfigMap", Name: "old-config"},
				{Group: "batch", Kind: "Job", Name: "migrate"},
			}},
			want: []string{
				"Sync 0 Deployment shop/web",
				"Sync 1 ConfigMap shop/old-config prune",
			},
		},
	}
	desired, live := load(t, "prune-desired.yaml"), load(t, "prune-live.yaml")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := build(t, desired, live, tt.opts)
			diffLines(t, "errors", messages(plan.Errors), nil)
			diffLines(t, "tasks", lines(plan.Tasks), tt.want)
		})
	}
}

// A prune task carries the live object and its options; a named hook
// that exists carries its live object too (for BeforeHookCreation).
func TestPruneTaskObjects(t *testing.T) {
	desired, live := load(t, "prune-desired.yaml"), load(t, "prune-live.yaml")
	plan := build(t, desired, live, sync.Options{Prune: true, SyncOptions: []string{"PrunePropagationPolicy=background"}})
	byRef := map[string]sync.Task{}
	for _, task := range plan.Tasks {
		byRef[task.Ref()] = task
	}
	hook := byRef["Job shop/migrate"]
	if hook.Live != live[2] || hook.Desired != desired[2] {
		t.Errorf("hook task: live %p desired %p, want %p %p", hook.Live, hook.Desired, live[2], desired[2])
	}
	prune := byRef["Service shop/old-svc"]
	if prune.Live != live[4] || prune.Desired != nil {
		t.Errorf("prune task: live %p desired %p, want %p and nil", prune.Live, prune.Desired, live[4])
	}
	if got := prune.SyncOptions.PrunePropagationPolicy; got != metav1.DeletePropagationBackground {
		t.Errorf("prune propagation policy %q, want Background", got)
	}
	if web := byRef["Deployment shop/web"]; web.Live != live[0] {
		t.Errorf("web: live object not matched")
	}
}

// ApplyOutOfSyncOnly leaves out existing resources that do not differ;
// new resources, hooks, prunes and resources that opt out still run.
func TestApplyOutOfSyncOnly(t *testing.T) {
	desired := append(load(t, "prune-desired.yaml"), parse(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: brand-new, namespace: shop}
---
apiVersion: v1
kind: Service
metadata:
  name: always
  namespace: shop
  annotations: {argocd.argoproj.io/sync-options: ApplyOutOfSyncOnly=false}
`)...)
	live := append(load(t, "prune-live.yaml"), parse(t, `
apiVersion: v1
kind: Service
metadata: {name: always, namespace: shop}
`)...)
	outOfSync := func(k sync.Key) bool { return k == sync.Key{Kind: "ConfigMap", Namespace: "shop", Name: "web-config"} }
	opts := sync.Options{Prune: true, SyncOptions: []string{"ApplyOutOfSyncOnly=true"}, OutOfSync: outOfSync}
	plan := build(t, desired, live, opts)
	diffLines(t, "tasks", lines(plan.Tasks), []string{
		"PreSync 0 Job shop/migrate hook[BeforeHookCreation]",
		"Sync 0 Deployment shop/old-worker prune",
		"Sync 0 ConfigMap shop/brand-new",
		"Sync 0 Service shop/always",
		"Sync 1 ConfigMap shop/old-config prune",
		"Sync 1 ConfigMap shop/web-config",
		"Sync 2 ConfigMap shop/keep-me prune skip:ignored (no prune)",
		"Sync 2 ConfigMap shop/was-skipped prune",
		"Sync 2 Service shop/old-svc prune",
		"Sync 3 Secret shop/old-secret prune last",
	})

	opts.OutOfSync = nil
	plan = build(t, desired, live, opts)
	if got := lines(plan.Tasks); !slices.Contains(got, "Sync 0 Deployment shop/web") || len(got) != 11 {
		t.Errorf("without OutOfSync every resource should be applied; got:\n%s", strings.Join(got, "\n"))
	}
}
