package sync_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/sync"
)

// Bad annotations and metadata give one clear error per problem, naming
// the resource; the resource gets no task.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		want     []string
	}{
		{
			name:     "unknown hook type",
			manifest: job(`argocd.argoproj.io/hook: PreSnc`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/hook: unknown hook type "PreSnc" (known: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete)`},
		},
		{
			name:     "hook type in the wrong case",
			manifest: job(`argocd.argoproj.io/hook: PreSync,postsync`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/hook: unknown hook type "postsync"; did you mean "PostSync"?`},
		},
		{
			name:     "empty hook",
			manifest: job(`argocd.argoproj.io/hook: " , "`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/hook is empty`},
		},
		{
			name:     "unknown Helm hook",
			manifest: job(`helm.sh/hook: pre-instal`),
			want:     []string{`Job shop/migrate: annotation helm.sh/hook: unknown Helm hook "pre-instal" (known: crd-install, post-delete, post-install, post-rollback, post-upgrade, pre-delete, pre-install, pre-rollback, pre-upgrade, test, test-failure, test-success)`},
		},
		{
			name:     "non-integer wave",
			manifest: job(`argocd.argoproj.io/sync-wave: one`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-wave: "one" is not an integer`},
		},
		{
			name:     "wave out of range",
			manifest: job(`argocd.argoproj.io/sync-wave: "99999999999999999999"`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-wave: "99999999999999999999" is out of range`},
		},
		{
			name:     "non-integer Helm weight",
			manifest: job("helm.sh/hook: pre-install\n    helm.sh/hook-weight: \"1.5\""),
			want:     []string{`Job shop/migrate: annotation helm.sh/hook-weight: "1.5" is not an integer`},
		},
		{
			name:     "unquoted wave",
			manifest: job(`argocd.argoproj.io/sync-wave: 2`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-wave: value 2 is not a string (quote it)`},
		},
		{
			name:     "unknown delete policy",
			manifest: job("argocd.argoproj.io/hook: PostSync\n    argocd.argoproj.io/hook-delete-policy: OnSuccess"),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/hook-delete-policy: unknown delete policy "OnSuccess" (known: BeforeHookCreation, HookFailed, HookSucceeded, Never)`},
		},
		{
			name:     "unknown Helm delete policy",
			manifest: job("helm.sh/hook: post-install\n    helm.sh/hook-delete-policy: hook-passed"),
			want:     []string{`Job shop/migrate: annotation helm.sh/hook-delete-policy: unknown delete policy "hook-passed" (known: before-hook-creation, hook-failed, hook-succeeded)`},
		},
		{
			name:     "unknown sync option value",
			manifest: job(`argocd.argoproj.io/sync-options: PruneLast=yes`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-options: sync option PruneLast=yes: want true or false`},
		},
		{
			name:     "unknown sync option",
			manifest: job(`argocd.argoproj.io/sync-options: "Validate=false, prunelast=true"`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-options: unknown sync option "prunelast"; did you mean "PruneLast"?`},
		},
		{
			name:     "sync option without value",
			manifest: job(`argocd.argoproj.io/sync-options: Replace`),
			want:     []string{`Job shop/migrate: annotation argocd.argoproj.io/sync-options: sync option "Replace": want Name=value`},
		},
		{
			name:     "several problems on one resource",
			manifest: job("argocd.argoproj.io/hook: Later\n    argocd.argoproj.io/sync-wave: soon"),
			want: []string{
				`Job shop/migrate: annotation argocd.argoproj.io/hook: unknown hook type "Later" (known: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete)`,
				`Job shop/migrate: annotation argocd.argoproj.io/sync-wave: "soon" is not an integer`,
			},
		},
		{
			name:     "no name",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: shop}\n",
			want:     []string{`ConfigMap shop/(no name): metadata.name is missing`},
		},
		{
			name:     "no kind",
			manifest: "apiVersion: v1\nmetadata: {name: cfg, namespace: shop}\n",
			want:     []string{`(no kind) shop/cfg: kind is missing`},
		},
		{
			name:     "name not a string",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 42, namespace: shop}\n",
			want:     []string{`ConfigMap shop/(no name): metadata.name is not a string`},
		},
		{
			name:     "generateName on a plain resource",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: cfg-, namespace: shop}\n",
			want:     []string{`ConfigMap shop/cfg-*: metadata.generateName is only for hooks: set metadata.name`},
		},
		{
			name:     "annotations not a map",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop, annotations: [a, b]}\n",
			want:     []string{`ConfigMap shop/cfg: metadata.annotations is not a map`},
		},
		{
			name:     "the same resource twice",
			manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: shop}\n",
			want:     []string{`ConfigMap shop/cfg: appears more than once in the desired manifests`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := build(t, parse(t, tt.manifest), nil, sync.Options{})
			diffLines(t, "errors", messages(plan.Errors), tt.want)
			if len(plan.Tasks) != 0 && tt.name != "the same resource twice" {
				t.Errorf("a bad resource got tasks: %v", lines(plan.Tasks))
			}
			if plan.Err() == nil {
				t.Errorf("Err() is nil")
			}
		})
	}
}

// job is a Job manifest with the given annotation lines.
func job(annotations string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: shop
  annotations:
    ` + annotations + "\n"
}

// All bad resources are reported at once, in input order; the good ones
// are still planned, so the whole picture shows, but the plan must not run.
func TestBadInputAllAtOnce(t *testing.T) {
	desired := parse(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  annotations: {argocd.argoproj.io/sync-wave: first}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
---
apiVersion: batch/v1
kind: Job
metadata:
  generateName: migrate-
  namespace: shop
  annotations: {argocd.argoproj.io/hook: BeforeSync}
`)
	live := parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: old
  namespace: shop
  annotations: {argocd.argoproj.io/sync-options: Prune=flase}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: old-hook
  namespace: shop
  annotations: {argocd.argoproj.io/hook: Whenever}
`)
	plan := build(t, desired, live, sync.Options{Prune: true})
	want := []string{
		`Deployment shop/web: annotation argocd.argoproj.io/sync-wave: "first" is not an integer`,
		`Job shop/migrate-*: annotation argocd.argoproj.io/hook: unknown hook type "BeforeSync" (known: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete)`,
		`ConfigMap shop/old (live object): annotation argocd.argoproj.io/sync-options: sync option Prune=flase: want true or false or confirm`,
	}
	diffLines(t, "errors", messages(plan.Errors), want)
	var keys []string
	for _, e := range plan.Errors {
		keys = append(keys, fmt.Sprintf("%s/%s %s %s/%s live=%v", e.Key.Group, e.Version, e.Key.Kind, e.Key.Namespace, e.Key.Name, e.Live))
	}
	diffLines(t, "error keys", keys, []string{
		"apps/v1 Deployment shop/web live=false",
		"batch/v1 Job shop/ live=false",
		"/v1 ConfigMap shop/old live=true",
	})
	diffLines(t, "tasks", lines(plan.Tasks), []string{"Sync 0 Service shop/web"})
	err := plan.Err()
	if err == nil || strings.Count(err.Error(), "\n") != 2 {
		t.Fatalf("Err() = %v, want the 3 errors joined", err)
	}
	if re, ok := errors.AsType[*sync.ResourceError](err); !ok || re.Ref != "Deployment shop/web" {
		t.Errorf("Err() does not unwrap to the first ResourceError: %v", re)
	}
}

// Settings that do nothing are warnings, not errors.
func TestWarnings(t *testing.T) {
	desired := parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: shop
  annotations:
    argocd.argoproj.io/sync-options: CreateNamespace=true,Replace=true
    argocd.argoproj.io/hook-delete-policy: HookSucceeded
---
apiVersion: batch/v1
kind: Job
metadata:
  name: both
  namespace: shop
  annotations: {argocd.argoproj.io/hook: "Skip,PostSync"}
`)
	plan := build(t, desired, nil, sync.Options{})
	diffLines(t, "errors", messages(plan.Errors), nil)
	diffLines(t, "warnings", messages(plan.Warnings), []string{
		`ConfigMap shop/cfg: annotation argocd.argoproj.io/hook-delete-policy has no effect on a resource that is not a hook`,
		`ConfigMap shop/cfg: annotation argocd.argoproj.io/sync-options: CreateNamespace=true applies to a whole application and has no effect on a resource`,
		`Job shop/both: annotation argocd.argoproj.io/hook: Skip together with other hook types is ignored`,
	})
	diffLines(t, "tasks", lines(plan.Tasks), []string{
		"Sync 0 ConfigMap shop/cfg",
		"PostSync 0 Job shop/both hook[BeforeHookCreation]",
	})
	if !plan.Tasks[0].SyncOptions.Replace {
		t.Errorf("Replace=true next to an ignored option was not applied")
	}
}

// Nil objects and application options that do not parse.
func TestBadOptionsAndNil(t *testing.T) {
	if _, err := sync.Build(nil, nil, sync.Options{SyncOptions: []string{"CreateNamespace=yes", "Prune=never"}}); err == nil ||
		err.Error() != "application sync options: sync option CreateNamespace=yes: want true or false\nsync option Prune=never: want true or false or confirm" {
		t.Errorf("Build with bad options: %v", err)
	}
	plan := build(t, []*unstructured.Unstructured{nil}, []*unstructured.Unstructured{nil}, sync.Options{})
	diffLines(t, "errors", messages(plan.Errors), []string{"desired object 1: object is nil"})
}
