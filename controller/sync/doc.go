// Package sync plans a sync the way Argo CD orders one: which objects are
// applied, which hooks run and which live objects are pruned, in which
// phase and wave, in which order. The planner is pure logic over unstructured
// objects; the Executor below applies the plan to a cluster,
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
// DefaultNamespace is that rule for other callers, such as the offline
// `graphcd admin diff`; OfflineScope tells scopes without API discovery,
// from CustomResourceDefinitions and live objects at hand.
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
// (confirm holds the prune, or the deletion with the application, until
// the Application's AnnotationDeletionApproved approves it; see
// DeletionApproved)
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
// task; the valid tasks are still listed. Given such a plan, Step applies
// and prunes nothing: it ends the operation Failed ("one or more
// synchronization tasks are not valid: ...") with one SyncFailed result
// per refused resource, its problems in the message:
//
//	syncResult:
//	  resources:
//	  - {kind: ConfigMap, namespace: shop, name: bad, status: SyncFailed, hookPhase: Failed, syncPhase: Sync,
//	     message: 'annotation argocd.argoproj.io/sync-wave: "first" is not an integer'}
//
// Warnings are for settings that have no effect.
//
// # Running a sync
//
// An Executor applies a plan to a cluster one step at a time. Step never
// blocks on the cluster: it does the next piece of work and says when to
// come back, and everything it did is in the OperationState it returns.
//
//	exec, _ := sync.New(sync.Config{Client: dyn, Mapper: mapper, FieldManager: "graphcd"})
//	state := app.Status.OperationState // nil starts the operation
//	for {
//		plan, _ := sync.Build(desired, live, opts) // the operation's revision
//		next, res, err := exec.Step(ctx, sync.Run{ID: id, Plan: plan}, state)
//		state = next // save it, even with err
//		if res.Done { break }
//		// requeue after res.RequeueAfter (or a backoff after err)
//	}
//
// The first step checks every resource with the API server (dryRun=All)
// and fails the sync with nothing applied when one is refused; then it
// records every task as a pending result. From then on a step runs the
// next group of tasks (one phase and wave) when the group before it is
// done: its hooks succeeded, its resources are healthy, its pruned
// objects are gone, and the wave delay (Config.WaveDelay, 2 s by default,
// like Argo CD's ARGOCD_SYNC_WAVE_DELAY) has passed; the group after the
// namespace CreateNamespace adds goes without the delay. Resources are
// applied client-side by default (kubectl's last-applied annotation and a
// three-way strategic merge patch, a JSON merge patch for custom
// resources), server-side with ServerSideApply=true (the field manager,
// conflicts forced), or replaced with Replace=true; Force=true deletes and
// re-creates an object the API server will not update; Validate=false
// turns field validation off. A result's message is kubectl's
// ("deployment.apps/backend created", "configured", "unchanged",
// "serverside-applied") or the API server's error. A resource stays in
// hook phase Running after its apply, as in Argo CD; a hook runs until its
// health is Healthy (Succeeded) or Degraded (Failed), and its
// HookSucceeded or HookFailed policy deletes it then. BeforeHookCreation
// deletes an object of the same name left by an earlier sync before the
// hook is created. Prunes delete with PrunePropagationPolicy and a UID
// precondition.
//
// When a task fails, no further group starts: the SyncFail hooks run, and
// the operation ends Failed with the failures in its message. Otherwise it
// ends Succeeded, "successfully synced (all tasks run)". Run.Terminate (or
// phase Terminating) deletes running hooks and ends the operation Failed,
// "operation terminated". Run.DryRun sends every apply and prune with
// dryRun=All in one step and runs no hooks.
//
// # Restarts
//
// Step keeps nothing that matters in memory, so a new Executor continues
// any recorded operation. The recorded results are the order of the sync:
// each has its phase and wave (SyncWave), so a plan built again later,
// with fewer prunes and mirrored waves that shifted, still runs as it
// started. A task matches its result by group, kind, namespace, name,
// phase and hook type; a hook with generateName matches the name the API
// server generated, which is recorded in the step that creates it. A hook
// that succeeded is never created again. The wave delay is held in memory
// and is waited again after a restart. A crash between creating a hook
// and saving the state loses that hook's name: a named hook is then
// deleted and created again (BeforeHookCreation), a generateName hook is
// created a second time.
package sync
