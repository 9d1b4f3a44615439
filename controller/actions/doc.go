// Package actions discovers and runs resource actions the way Argo CD
// does: operations a person runs on one live object from the resource tree
// (restart a Deployment, suspend a CronJob, create a Job from it).
//
//	e, err := actions.New(actions.Options{Custom: custom, ClusterScoped: scope})
//	list, err := e.Discover(ctx, obj)                       // name, disabled, params
//	changes, err := e.Run(ctx, obj, "scale", map[string]string{"replicas": "3"})
//
// Run writes nothing: it returns the changes the action would make, each a
// patch of obj (with the JSON merge patch) or an object to create; the
// caller applies them.
//
// # Built-in actions
//
// Written in Go: restart (apps Deployment, StatefulSet and DaemonSet: the
// pod template's kubectl.kubernetes.io/restartedAt annotation set to now,
// as `kubectl rollout restart` does; disabled on a paused Deployment),
// scale (Deployment and StatefulSet, integer parameter replicas defaulting
// to the current count), pause and resume (Deployment spec.paused),
// suspend and resume (batch CronJob spec.suspend), and create-job
// (CronJob: a Job from spec.jobTemplate named <cronjob>-<suffix>, owned
// by the CronJob, annotated cronjob.kubernetes.io/instantiate: manual).
// For operators' kinds: Argo Rollouts' Rollout (restart, pause, resume,
// promote-full, abort, retry), Argo Workflows' CronWorkflow and Flux's
// kinds (suspend, resume; Flux's also reconcile), External Secrets'
// ExternalSecret (refresh) and KEDA's ScaledObject (pause, resume); see
// builtin_operators.go. Discovery marks an action disabled when it does
// not apply to the object as it is.
//
// # Custom actions
//
// Lua 5.1 scripts in Argo CD's form (settings key
// resource.customizations.actions.<group>_<kind>): discovery.lua reads obj
// and returns a table of actions by name, each {disabled, iconClass,
// displayName, params = {{name, type, default}}}; each definition's
// action.lua reads obj and actionParams (a table of strings by parameter
// name) and returns obj changed, or a list of {operation = "create" or
// "patch", resource = {...}}. Custom actions replace the kind's built-in
// ones unless mergeBuiltinActions is set; then a custom action wins over a
// built-in one of the same name.
//
// Scripts run in the health engine's sandbox, on its pooled Lua states and
// under its time and memory limits (controller/health). What they return
// is checked before anything is written: action and parameter names,
// parameter types and lengths, at most 64 actions and 16 changes; a patch
// may only change obj itself; a created object must have an apiVersion,
// kind and name, lands in obj's namespace, and is cluster-scoped only when
// obj is. Errors say which rule failed and wrap ErrNoAction, ErrDisabled,
// ErrBadParam or ErrBadResult, or a *health.ScriptError for the script's
// own failure.
package actions
