// Package health assesses the health of Kubernetes resources the way Argo CD
// does, so that application health and sync waves behave the same.
//
// An Engine judges one object at a time:
//
//	e, err := health.New(health.Options{LuaChecks: checks})
//	res, err := e.Check(ctx, obj) // nil result: the kind has no health
//
// and an application's health is the worst of its resources':
//
//	app := health.Aggregate(results) // Healthy < Suspended < Progressing < Missing < Degraded < Unknown
//
// # Built-in checks
//
// One file per kind: Deployment, StatefulSet, DaemonSet, ReplicaSet (rollout
// progress as `kubectl rollout status` sees it; a paused Deployment is
// Suspended, an exceeded progress deadline Degraded), Pod (phase, Ready,
// containers waiting on CrashLoopBackOff or ImagePullBackOff; pods that run
// to completion, restartPolicy Never or OnFailure, are treated as hooks
// unless annotated argocd.argoproj.io/ignore-restart-policy: "true" and
// not a sync hook), Service and Ingress (Progressing until
// status.loadBalancer.ingress lists an entry; as in Argo CD, an entry
// without ip or hostname counts), PersistentVolumeClaim, Job, CronJob,
// HorizontalPodAutoscaler (the v1 conditions annotation, or the
// status.conditions of v2beta1, v2beta2 and v2, mapped as Argo CD maps
// them: failure reasons first, then AbleToScale or ScalingLimited True),
// APIService, and graphcd.io Application (the child's status.health, for
// app of apps). An object with metadata.deletionTimestamp is Progressing
// "Pending deletion", unless it is a sync hook.
//
// The operators most clusters run have built-in checks too, one file per
// project (certmanager.go, argo.go, flux.go, crossplane.go, ...), following
// the status each project documents. Most share readiness, the kstatus
// reading of status.conditions (generation observed, Stalled, Ready,
// Reconciling), or phaseRule, a map from a phase field to a status.
// builtinPatternChecks judge whole families by group and kind patterns
// (Crossplane managed resources in *.crossplane.io and *.upbound.io, every
// Gatekeeper constraint); an exact entry in builtinChecks wins over them.
// docs/configuration.md lists every built-in kind, and a test keeps that
// list complete.
//
// The checks read fields with plain map access, never converting to typed
// objects, and cost well under a microsecond.
//
// # Lua checks
//
// Custom checks are Lua 5.1 scripts in Argo CD's form, configured under
// resource.customizations.health.<group>_<kind>:
//
//	data:
//	  resource.customizations.health.cert-manager.io_Certificate: |
//	    hs = {}
//	    if obj.status ~= nil and obj.status.conditions ~= nil then
//	      for i, condition in ipairs(obj.status.conditions) do
//	        if condition.type == "Ready" then
//	          hs.status = condition.status == "True" and "Healthy" or "Degraded"
//	          hs.message = condition.message
//	          return hs
//	        end
//	      end
//	    end
//	    hs.status = "Progressing"
//	    hs.message = "Waiting for certificate"
//	    return hs
//
// The global obj is the object (numbers as Lua numbers, lists as 1-based
// tables without their null items, as in Argo CD; metadata.managedFields is
// left out). The script returns a table
// with status (one of the six statuses) and an optional message. Anything
// else, a runtime error included, gives Unknown with the reason in the
// message. A Lua check wins over the built-in check for the same kind, and a
// check for an exact group and kind wins over one with "*" wildcards; among
// wildcard checks the one with the most literal characters wins, then the
// one listed first.
//
// # The sandbox
//
// What a script can reach differs from Argo CD only where Argo CD would let
// a script out of the process:
//
//   - Restricted (the default, as in Argo CD): the base functions except
//     dofile, loadfile, load, loadstring, module, collectgarbage, getfenv and
//     setfenv; print, which discards its output; table; os with only time,
//     date, difftime and clock; json (decode and encode, as Argo CD
//     preloads it), only through require("json"); and require, which
//     returns those libraries and never loads a file.
//   - UseOpenLibs adds string (also as methods on strings), math (without
//     randomseed) and coroutine. Argo CD opens every gopher-lua library here,
//     io and os.execute included; graphcd never offers io, debug, channel or
//     any os function beyond time, date, difftime and clock, in either mode.
//     os.clock counts seconds since the run started.
//
// The library functions behave as gopher-lua's, which Argo CD runs: os.time
// takes date fields as numbers or as strings holding numbers (what
// string.match captures), and a missing or unreadable field takes its
// default instead of failing; os.date knows strftime's common directives
// and gopher-lua's %F and %P; json.decode drops nulls from lists, and
// json.encode writes an empty table as [] and refuses sparse lists and
// mixed keys, returning nil and the error.
//
// Each run has a fresh global table and fresh library tables, so a script
// cannot leave anything behind for the next one. A run is cut off after
// Options.Timeout (one second by default) and Check then returns an error
// wrapping ErrScriptTimeout. Recursion is bounded by the Lua call stack.
// The .. operator, string.rep, string.gsub, string.format, table.concat and
// json.encode refuse to build strings over 4 MiB, and the strings a run
// builds (json.decode's input included) count against
// Options.MemoryBudget.
//
// Compiled scripts are kept for the engine's life and Lua states are pooled;
// a typical conditions script costs some tens of microseconds.
//
// # Other scripts
//
// Resource actions run in the same sandbox, under the same limits and on
// the same pooled states: CompileScript compiles a script once and
// Engine.RunScript runs it with the globals given and returns what it
// returned as JSON-like Go values.
package health
