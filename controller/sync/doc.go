// Package sync plans a sync the way Argo CD orders one: which objects are
// applied, which hooks run and which live objects are pruned, in which
// phase and wave, in which order. It is pure logic over unstructured
// objects; the executor that applies the plan to a cluster builds on it,
// and `graphcd admin sync-plan` prints it.
//
//	plan, err := sync.Build(desired, live, sync.Options{
//		Namespace:   "shop",                     // spec.destination.namespace
//		Prune:       true,                       // the operation's prune flag
//		SyncOptions: app.Spec.SyncPolicy.SyncOptions,
//	})
//	if err != nil { ... }              // a bad application sync option
//	if err := plan.Err(); err != nil { ... } // bad resources: run nothing
//	for _, t := range plan.Tasks { ... }     // in order, by phase and wave
//
// # Phases, waves and order
//
// A sync runs in phases: PreSync, Sync, PostSync. Plain resources are in
// Sync; hooks choose their phase. Within a phase, resources and hooks run
// in waves, lowest first; a wave starts only when the one before it is
// healthy. Within a wave, tasks are ordered by kind (Namespace,
// NetworkPolicy, ResourceQuota, LimitRange, PodSecurityPolicy,
// PodDisruptionBudget, ServiceAccount, Secret, ConfigMap, StorageClass,
// PersistentVolume, PersistentVolumeClaim, CustomResourceDefinition,
// ClusterRole, ClusterRoleBinding, Role, RoleBinding, Service, DaemonSet,
// Pod, ReplicationController, ReplicaSet, Deployment,
// HorizontalPodAutoscaler, StatefulSet, Job, CronJob, IngressClass,
// Ingress, APIService, then every other kind, custom resources included),
// then by name. Hooks take no special place: a Sync hook in wave 0 is
// ordered among the plain resources of wave 0 by its kind and name. As in
// Argo CD, only the kind's name counts, whatever its API group.
//
// The wave comes from argocd.argoproj.io/sync-wave, or from
// helm.sh/hook-weight when there is none; the default is 0 and waves may
// be negative:
//
//	apiVersion: batch/v1
//	kind: Job
//	metadata:
//	  generateName: schema-upgrade-
//	  annotations:
//	    argocd.argoproj.io/hook: PreSync
//	    argocd.argoproj.io/hook-delete-policy: HookSucceeded
//	---
//	apiVersion: apps/v1
//	kind: Deployment
//	metadata:
//	  name: backend                 # wave 0
//	---
//	apiVersion: batch/v1
//	kind: Job
//	metadata:
//	  generateName: maintenance-on-
//	  annotations:
//	    argocd.argoproj.io/hook: Sync
//	    argocd.argoproj.io/sync-wave: "1"
//	---
//	apiVersion: apps/v1
//	kind: Deployment
//	metadata:
//	  name: frontend
//	  annotations:
//	    argocd.argoproj.io/sync-wave: "2"
//
// plans, for destination namespace shop, as (`graphcd admin sync-plan -f
// app.yaml --namespace shop`)
//
//	PHASE     WAVE   KIND              NAMESPACE   NAME               HOOK      DELETE-POLICY
//	PreSync   0      Job.batch         shop        schema-upgrade-*   PreSync   HookSucceeded
//	Sync      0      Deployment.apps   shop        backend
//	Sync      1      Job.batch         shop        maintenance-on-*   Sync      BeforeHookCreation
//	Sync      2      Deployment.apps   shop        frontend
//
// Two dependencies override the order, as in Argo CD: a Namespace that
// would come after a task in it moves just before that task, and a
// CustomResourceDefinition moves before the first of its custom resources
// (matched by spec.group and spec.names.kind); the moved task takes the
// phase and wave of the task it now precedes. With CreateNamespace=true
// the destination namespace is created first of all, in PreSync, unless
// Git holds that Namespace; managedNamespaceMetadata labels and annotates
// it.
//
// Objects without a namespace get the destination namespace unless their
// type is cluster-scoped (Options.ClusterScoped, or a table of the
// built-in types). The planner copies an object before changing it.
//
// # Hooks
//
// argocd.argoproj.io/hook takes a comma-separated list of PreSync, Sync,
// PostSync, SyncFail, Skip, PreDelete and PostDelete. A hook in several
// phases gets a task in each. Skip alone leaves the object out of the
// sync (Skip next to other types is ignored, with a warning). SyncFail
// hooks are in Plan.SyncFail, to run only when the sync fails; PreDelete
// and PostDelete hooks are in Plan.DeletionHooks, for the deletion of the
// application, never in a sync. A hook may have metadata.generateName
// instead of a name: its task keeps GenerateName and an empty Name.
//
// helm.sh/hook is read when there is no argocd.argoproj.io/hook:
// pre-install and pre-upgrade are PreSync, post-install and post-upgrade
// PostSync, pre-delete PreDelete, post-delete PostDelete. Argo CD does not
// run test, test-success, test-failure, pre-rollback and post-rollback
// hooks: an object with only those is left out. crd-install alone is no
// hook; the object syncs as a plain resource.
//
// argocd.argoproj.io/hook-delete-policy (BeforeHookCreation,
// HookSucceeded, HookFailed, Never) and helm.sh/hook-delete-policy
// (before-hook-creation, hook-succeeded, hook-failed) both count; a hook
// with neither gets BeforeHookCreation.
//
// Hooks are never pruned and are not compared as resources. A selective
// sync (Options.Resources) and Options.SkipHooks run no hooks.
//
// # Pruning
//
// A live object that no desired object matches (by group, kind, namespace
// and name) is pruned in the Sync phase, before the applies of its wave.
// Its wave is read from the live object, and prunes run in reverse wave
// order: the distinct waves of the prunes are mirrored, so what was
// created last is deleted first. PruneLast=true (for the application or
// on the live object) moves a prune to a final wave after every other
// Sync wave. Without Options.Prune, and for objects with Prune=false,
// prune tasks are planned with PruneSkipped set, so the executor reports
// them as Argo CD does ("ignored (requires pruning)", "ignored (no
// prune)").
//
// # Sync options
//
// Application options (Options.SyncOptions, "Name=value") are overridden
// per resource by argocd.argoproj.io/sync-options (comma-separated):
//
//	Prune=true|false|confirm         Delete=true|false|confirm
//	Validate=true|false              SkipDryRunOnMissingResource=true|false
//	ApplyOutOfSyncOnly=true|false    PruneLast=true|false
//	Replace=true|false               Force=true|false
//	ServerSideApply=true|false       RespectIgnoreDifferences=true|false
//
// and these only for a whole application (on a resource they are
// ignored, with a warning):
//
//	CreateNamespace=true|false       FailOnSharedResource=true|false
//	ClientSideApplyMigration=true|false
//	PrunePropagationPolicy=foreground|background|orphan
//
// helm.sh/resource-policy: keep means Delete=false. With
// ApplyOutOfSyncOnly, objects that exist and do not differ
// (Options.OutOfSync) are left out; hooks, prunes and new objects stay.
//
// # Bad input
//
// Where Argo CD silently ignores a value it does not understand, the
// planner reports it: an unknown hook type, Helm hook or delete policy, a
// wave that is not an integer, an unknown sync option or value, a missing
// kind or name, an annotation value that is not a string, the same object
// twice. Each problem is one ResourceError naming the object as
// "Kind namespace/name", and all of them are reported at once. A plan with
// errors must not run at all, as Argo CD fails a sync with an invalid
// task; the valid tasks are still listed. Warnings are for settings that
// have no effect.
package sync
