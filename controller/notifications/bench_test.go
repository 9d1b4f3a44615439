package notifications

import (
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// syncedApp is an Application as the controller leaves it after a
// successful sync of one ConfigMap (the loadtest's workload), subscribed
// to on-sync-succeeded.
const syncedApp = `
apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: app-0001
  namespace: graphcd
  annotations:
    notifications.argoproj.io/subscribe.on-sync-succeeded.hook-1: ""
spec:
  project: default
  source: {repoURL: "http://127.0.0.1:8080/repo.git", path: apps/app-0001, targetRevision: main}
  destination: {server: "https://kubernetes.default.svc", namespace: app-0001}
  syncPolicy:
    automated: {prune: true, selfHeal: true}
    syncOptions: [CreateNamespace=true]
status:
  sync: {status: Synced, revision: 0123456789abcdef0123456789abcdef01234567}
  health: {status: Healthy}
  resources:
  - {kind: ConfigMap, name: config, namespace: app-0001, version: v1, status: Synced, health: {status: Healthy}}
  history:
  - {id: 0, revision: 0123456789abcdef0123456789abcdef01234567, deployedAt: "2026-12-06T06:00:00Z", source: {repoURL: "http://127.0.0.1:8080/repo.git", path: apps/app-0001, targetRevision: main}}
  operationState:
    phase: Succeeded
    message: successfully synced (all tasks run)
    startedAt: "2026-12-06T06:00:00Z"
    finishedAt: "2026-12-06T06:00:01Z"
    operation: {sync: {revision: 0123456789abcdef0123456789abcdef01234567}, initiatedBy: {automated: true}}
    syncResult:
      revision: 0123456789abcdef0123456789abcdef01234567
      resources:
      - {kind: ConfigMap, name: config, namespace: app-0001, version: v1, status: Synced, message: configmap/config created, syncPhase: Sync}
`

// What the controller does for each change of a subscribed app that
// needs no send: the app as JSON, its subscriptions, the catalog's
// triggers run on it, and the plan on its state (here: already sent).
func BenchmarkEvaluate(b *testing.B) {
	c, err := Parse(map[string]string{"service.webhook.hook-1": "url: http://127.0.0.1:1\n"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var typed v1alpha1.Application
	if err := yaml.UnmarshalStrict([]byte(syncedApp), &typed); err != nil {
		b.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&typed)
	if err != nil {
		b.Fatal(err)
	}
	subs, err := c.Subscriptions(typed.Annotations, typed.Labels, nil)
	if err != nil || len(subs) != 1 {
		b.Fatal(subs, err)
	}
	occs, _ := c.Occurrences(obj, subs)
	st := State{}
	plan := Planner{Now: time.Now()}.Plan(st, occs)
	for _, key := range plan.Claims {
		st.Sent(key, time.Now())
	}
	if len(plan.Claims) != 1 || plan.Due[plan.Claims[0]].Destination != (services.Destination{Service: "hook-1"}) {
		b.Fatalf("plan %+v", plan)
	}
	state, err := st.Encode(nil)
	if err != nil {
		b.Fatal(err)
	}
	typed.Annotations[StateAnnotation] = state
	b.ReportAllocs()
	for b.Loop() {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&typed)
		if err != nil {
			b.Fatal(err)
		}
		subs, _ := c.Subscriptions(typed.Annotations, typed.Labels, nil)
		st, _ := ParseState(typed.Annotations[StateAnnotation])
		occs, _ := c.Occurrences(obj, subs)
		if p := (Planner{Now: time.Now()}).Plan(st, occs); p.Changed {
			b.Fatal("a sent notification planned again")
		}
	}
}
