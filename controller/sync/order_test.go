package sync_test

import (
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

func TestOrder(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		opts     sync.Options
		want     []string // Plan.Tasks
		syncFail []string
		deletion []string
	}{
		{
			name:    "every kind of the kind order, then custom resources and unknown kinds by name",
			fixture: "kinds.yaml",
			want: []string{
				"Sync 0 Namespace shop",
				"Sync 0 NetworkPolicy shop/a-netpol",
				"Sync 0 ResourceQuota shop/a-quota",
				"Sync 0 LimitRange shop/a-limitrange",
				"Sync 0 PodSecurityPolicy a-psp",
				"Sync 0 PodDisruptionBudget shop/a-pdb",
				"Sync 0 ServiceAccount shop/a-serviceaccount",
				"Sync 0 Secret shop/a-secret",
				"Sync 0 ConfigMap shop/a-configmap",
				"Sync 0 StorageClass a-storageclass",
				"Sync 0 PersistentVolume a-pv",
				"Sync 0 PersistentVolumeClaim shop/a-pvc",
				"Sync 0 CustomResourceDefinition widgets.stable.example.com",
				"Sync 0 ClusterRole a-clusterrole",
				"Sync 0 ClusterRoleBinding a-clusterrolebinding",
				"Sync 0 Role shop/a-role",
				"Sync 0 RoleBinding shop/a-rolebinding",
				"Sync 0 Service shop/a-service",
				"Sync 0 DaemonSet shop/a-daemonset",
				"Sync 0 Pod shop/a-pod",
				"Sync 0 ReplicationController shop/a-rc",
				"Sync 0 ReplicaSet shop/a-replicaset",
				"Sync 0 Deployment shop/a-deployment",
				"Sync 0 HorizontalPodAutoscaler shop/a-hpa",
				"Sync 0 StatefulSet shop/a-statefulset",
				"Sync 0 Job shop/a-job",
				"Sync 0 CronJob shop/a-cronjob",
				"Sync 0 IngressClass a-ingressclass",
				"Sync 0 Ingress shop/a-ingress",
				"Sync 0 APIService v1beta1.metrics.example.com",
				"Sync 0 Gadget shop/a-gadget",
				"Sync 0 Widget shop/b-widget",
			},
		},
		{
			name:    "negative and positive waves; Helm weight without sync-wave",
			fixture: "waves.yaml",
			want: []string{
				"Sync -5 ConfigMap shop/settings",
				"Sync -1 Secret shop/api-token",
				"Sync 0 Deployment shop/worker",
				"Sync 1 ConfigMap shop/flags",
				"Sync 1 Service shop/api",
				"Sync 2 ServiceAccount shop/api",
				"Sync 10 Deployment shop/api",
			},
		},
		{
			name:    "hooks of every phase, Skip left out",
			fixture: "hooks.yaml",
			want: []string{
				"PreSync 0 Job shop/db-migrate-* hook[BeforeHookCreation]",
				"PreSync 0 Job shop/notify hook[BeforeHookCreation]",
				"Sync 0 Service shop/web",
				"Sync 0 Pod shop/warm-cache hook[HookSucceeded,HookFailed]",
				"Sync 0 Deployment shop/web",
				"PostSync 0 Job shop/notify hook[BeforeHookCreation]",
				"PostSync 0 Job shop/smoke-test hook[BeforeHookCreation,HookSucceeded]",
			},
			syncFail: []string{"SyncFail 0 Job shop/rollback-* hook[BeforeHookCreation]"},
			deletion: []string{
				"PreDelete 0 Job shop/drain hook[BeforeHookCreation]",
				"PostDelete 0 Job shop/goodbye hook[Never]",
			},
		},
		{
			name:    "skipped hooks",
			fixture: "hooks.yaml",
			opts:    sync.Options{SkipHooks: true},
			want:    []string{"Sync 0 Service shop/web", "Sync 0 Deployment shop/web"},
			deletion: []string{
				"PreDelete 0 Job shop/drain hook[BeforeHookCreation]",
				"PostDelete 0 Job shop/goodbye hook[Never]",
			},
		},
		{
			name:    "Helm hooks: pre-install weights -2 and -1, post-install, test left out, crd-install is a resource",
			fixture: "helm-hooks.yaml",
			want: []string{
				"PreSync -2 Job shop/shop-db-create hook[BeforeHookCreation]",
				"PreSync -1 Job shop/shop-db-init hook[BeforeHookCreation,HookSucceeded]",
				"Sync 0 PersistentVolumeClaim shop/shop-data",
				"Sync 0 CustomResourceDefinition coupons.shop.example.com",
				"Sync 0 Deployment shop/shop",
				"PostSync 0 Job shop/shop-seed hook[HookFailed]",
				"PostSync 0 Job shop/shop-upgrade-check hook[BeforeHookCreation]",
			},
		},
		{
			name:    "sync-waves app: PreSync job, backend, Sync hook, frontend, hook",
			fixture: "sync-waves-app.yaml",
			opts:    sync.Options{Namespace: "shop"},
			want: []string{
				"PreSync 0 Job shop/schema-upgrade-* hook[HookSucceeded]",
				"Sync 0 Service shop/backend",
				"Sync 0 Deployment shop/backend",
				"Sync 1 Job shop/maintenance-on-* hook[BeforeHookCreation]",
				"Sync 2 Service shop/frontend",
				"Sync 2 Deployment shop/frontend",
				"Sync 3 Job shop/maintenance-off-* hook[BeforeHookCreation]",
			},
		},
		{
			name:    "CreateNamespace creates the destination namespace first",
			fixture: "sync-waves-app.yaml",
			opts:    sync.Options{Namespace: "shop", SyncOptions: []string{"CreateNamespace=true"}},
			want: []string{
				"PreSync 0 Namespace shop creates-namespace",
				"PreSync 0 Job shop/schema-upgrade-* hook[HookSucceeded]",
				"Sync 0 Service shop/backend",
				"Sync 0 Deployment shop/backend",
				"Sync 1 Job shop/maintenance-on-* hook[BeforeHookCreation]",
				"Sync 2 Service shop/frontend",
				"Sync 2 Deployment shop/frontend",
				"Sync 3 Job shop/maintenance-off-* hook[BeforeHookCreation]",
			},
		},
		{
			name:    "CreateNamespace before a PreSync hook of a negative wave",
			fixture: "helm-hooks.yaml",
			opts:    sync.Options{Namespace: "shop", SyncOptions: []string{"CreateNamespace=true"}},
			want: []string{
				"PreSync -2 Namespace shop creates-namespace",
				"PreSync -2 Job shop/shop-db-create hook[BeforeHookCreation]",
				"PreSync -1 Job shop/shop-db-init hook[BeforeHookCreation,HookSucceeded]",
				"Sync 0 PersistentVolumeClaim shop/shop-data",
				"Sync 0 CustomResourceDefinition coupons.shop.example.com",
				"Sync 0 Deployment shop/shop",
				"PostSync 0 Job shop/shop-seed hook[HookFailed]",
				"PostSync 0 Job shop/shop-upgrade-check hook[BeforeHookCreation]",
			},
		},
		{
			name:    "a selective sync runs no hooks",
			fixture: "sync-waves-app.yaml",
			opts: sync.Options{Namespace: "shop", Resources: []v1alpha1.SyncOperationResource{
				{Group: "apps", Kind: "Deployment", Name: "frontend"},
				{Kind: "Service", Name: "backend", Namespace: "shop"},
				{Kind: "Service", Name: "frontend", Namespace: "elsewhere"},
			}},
			want: []string{
				"Sync 0 Service shop/backend",
				"Sync 2 Deployment shop/frontend",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := build(t, load(t, tt.fixture), nil, tt.opts)
			diffLines(t, "errors", messages(plan.Errors), nil)
			diffLines(t, "tasks", lines(plan.Tasks), tt.want)
			diffLines(t, "SyncFail tasks", lines(plan.SyncFail), tt.syncFail)
			diffLines(t, "deletion hooks", lines(plan.DeletionHooks), tt.deletion)
		})
	}
}

// A Namespace or CRD that sorts after a resource depending on it moves
// before that resource, taking its phase and wave, as in Argo CD.
func TestOrderDependencies(t *testing.T) {
	desired := parse(t, `
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  annotations: {argocd.argoproj.io/sync-wave: "5"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team-a}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  namespace: team-a
  annotations: {argocd.argoproj.io/sync-wave: "-1"}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.example.com
  annotations: {argocd.argoproj.io/sync-wave: "2"}
spec:
  group: example.com
  names: {kind: Gizmo, plural: gizmos}
---
apiVersion: example.com/v1
kind: Gizmo
metadata:
  name: g1
  namespace: team-a
  annotations: {argocd.argoproj.io/sync-wave: "1"}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: prepare
  namespace: team-b
  annotations: {argocd.argoproj.io/hook: PreSync}
`)
	plan := build(t, desired, nil, sync.Options{})
	diffLines(t, "tasks", lines(plan.Tasks), []string{
		"PreSync 0 Namespace team-b",
		"PreSync 0 Job team-b/prepare hook[BeforeHookCreation]",
		"Sync -1 Namespace team-a",
		"Sync -1 ConfigMap team-a/cfg",
		"Sync 0 Deployment team-a/api",
		"Sync 1 CustomResourceDefinition gizmos.example.com",
		"Sync 1 Gizmo team-a/g1",
	})
}

// Objects without a namespace get the destination namespace, except
// cluster-scoped ones; the input objects are left as they were.
func TestOrderNamespaceDefault(t *testing.T) {
	desired := parse(t, `
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
---
apiVersion: example.com/v1
kind: ClusterThing
metadata: {name: global}
`)
	plan := build(t, desired, nil, sync.Options{Namespace: "shop"})
	diffLines(t, "tasks", lines(plan.Tasks), []string{
		"Sync 0 ConfigMap shop/cfg",
		"Sync 0 ClusterRole reader",
		"Sync 0 ClusterThing shop/global",
	})
	if got := plan.Tasks[0].Desired.GetNamespace(); got != "shop" {
		t.Errorf("task's desired object namespace %q, want shop", got)
	}
	if got := desired[0].GetNamespace(); got != "" {
		t.Errorf("input object modified: namespace %q", got)
	}
	clusterScoped := func(group, kind string) bool { return kind == "ClusterThing" || kind == "ClusterRole" }
	plan = build(t, desired, nil, sync.Options{Namespace: "shop", ClusterScoped: clusterScoped})
	diffLines(t, "tasks with discovery", lines(plan.Tasks), []string{
		"Sync 0 ConfigMap shop/cfg",
		"Sync 0 ClusterRole reader",
		"Sync 0 ClusterThing global",
	})
}

// The namespace CreateNamespace adds carries managedNamespaceMetadata; it
// is not added when Git has the Namespace, and a live one is kept.
func TestCreateNamespace(t *testing.T) {
	opts := sync.Options{
		Namespace:   "shop",
		SyncOptions: []string{"CreateNamespace=true"},
		ManagedNamespaceMetadata: &v1alpha1.ManagedNamespaceMetadata{
			Labels: map[string]string{"team": "shop"}, Annotations: map[string]string{"owner": "payments"},
		},
	}
	desired := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n")
	live := parse(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n")
	plan := build(t, desired, live, opts)
	diffLines(t, "tasks", lines(plan.Tasks), []string{
		"PreSync 0 Namespace shop creates-namespace",
		"Sync 0 ConfigMap shop/cfg",
	})
	ns := plan.Tasks[0]
	if ns.Desired.GetLabels()["team"] != "shop" || ns.Desired.GetAnnotations()["owner"] != "payments" {
		t.Errorf("namespace metadata: labels %v, annotations %v", ns.Desired.GetLabels(), ns.Desired.GetAnnotations())
	}
	if ns.Live != live[0] {
		t.Errorf("namespace task's live object not set")
	}

	withNamespace := append(parse(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n"), desired...)
	plan = build(t, withNamespace, nil, opts)
	diffLines(t, "tasks when Git has the Namespace", lines(plan.Tasks), []string{
		"Sync 0 Namespace shop",
		"Sync 0 ConfigMap shop/cfg",
	})
}
