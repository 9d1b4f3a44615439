package actions

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Annotations the operators' built-in actions write, as the operators'
// own CLIs do.
const (
	// FluxReconcileAnnotation asks a Flux controller to reconcile the
	// object now, as `flux reconcile` does.
	FluxReconcileAnnotation = "reconcile.fluxcd.io/requestedAt"
	// ForceSyncAnnotation asks External Secrets to refresh an
	// ExternalSecret now.
	ForceSyncAnnotation = "force-sync"
	// KEDAPausedAnnotation pauses a KEDA ScaledObject's autoscaling.
	KEDAPausedAnnotation = "autoscaling.keda.sh/paused"
)

// Names of the operators' built-in actions.
const (
	ActionReconcile   = "reconcile"
	ActionRefresh     = "refresh"
	ActionPromoteFull = "promote-full"
	ActionAbort       = "abort"
	ActionRetry       = "retry"
)

// operatorBuiltins are the built-in actions of the operators platform
// teams run most: Argo Rollouts, Argo Workflows' CronWorkflow, Flux's
// controllers, External Secrets and KEDA. Actions that change status
// (promote-full, abort, retry, a Rollout's resume) write it the way the
// operators' CLIs do; the API applies that part to the status
// subresource.
func operatorBuiltins() map[groupKind]*builtinKind {
	out := map[groupKind]*builtinKind{
		{"argoproj.io", "Rollout"}: {
			discover: func(obj map[string]any) []Action {
				paused := boolField(obj, "spec", "paused")
				_, pausedByStep, _ := unstructured.NestedSlice(obj, "status", "pauseConditions")
				aborted := boolField(obj, "status", "abort")
				return []Action{
					{Name: ActionAbort, Disabled: aborted, IconClass: "fa fa-fw fa-times-circle", DisplayName: "Abort"},
					{Name: ActionPause, Disabled: paused, IconClass: "fa fa-fw fa-pause-circle", DisplayName: "Pause"},
					{Name: ActionPromoteFull, Disabled: aborted, IconClass: "fa fa-fw fa-angle-double-right", DisplayName: "Promote-Full"},
					{Name: ActionRestart, IconClass: "fa fa-fw fa-redo", DisplayName: "Restart"},
					{Name: ActionResume, Disabled: !paused && !pausedByStep, IconClass: "fa fa-fw fa-play-circle", DisplayName: "Resume"},
					{Name: ActionRetry, Disabled: !aborted, IconClass: "fa fa-fw fa-redo-alt", DisplayName: "Retry"},
				}
			},
			run: map[string]builtinAction{
				// spec.restartAt makes the Rollout controller replace its
				// pods, as `kubectl argo rollouts restart` does.
				ActionRestart: setTime("spec", "restartAt"),
				ActionPause:   setField(true, "spec", "paused"),
				// Resume lifts a manual pause and a pause step, as
				// `kubectl argo rollouts promote` does.
				ActionResume: func(obj map[string]any, _ map[string]string, _ time.Time) (any, error) {
					if err := unstructured.SetNestedField(obj, false, "spec", "paused"); err != nil {
						return nil, err
					}
					if status, ok := obj["status"].(map[string]any); ok {
						status["pauseConditions"] = nil
					}
					return obj, nil
				},
				ActionPromoteFull: setField(true, "status", "promoteFull"),
				ActionAbort:       setField(true, "status", "abort"),
				ActionRetry:       setField(false, "status", "abort"),
			},
		},
		{"argoproj.io", "CronWorkflow"}: suspendable(false),
		{"keda.sh", "ScaledObject"}: {
			discover: func(obj map[string]any) []Action {
				paused := annotation(obj, KEDAPausedAnnotation) == "true"
				return []Action{
					{Name: ActionPause, Disabled: paused, IconClass: "fa fa-fw fa-pause-circle", DisplayName: "Pause autoscaling"},
					{Name: ActionResume, Disabled: !paused, IconClass: "fa fa-fw fa-play-circle", DisplayName: "Resume autoscaling"},
				}
			},
			run: map[string]builtinAction{
				ActionPause:  setAnnotation(KEDAPausedAnnotation, func(time.Time) string { return "true" }),
				ActionResume: removeAnnotation(KEDAPausedAnnotation),
			},
		},
		{"external-secrets.io", "ExternalSecret"}: {
			discover: func(map[string]any) []Action {
				return []Action{{Name: ActionRefresh, IconClass: "fa fa-fw fa-sync", DisplayName: "Refresh"}}
			},
			run: map[string]builtinAction{
				ActionRefresh: setAnnotation(ForceSyncAnnotation, func(now time.Time) string { return strconv.FormatInt(now.Unix(), 10) }),
			},
		},
	}
	for _, gk := range []groupKind{
		{"kustomize.toolkit.fluxcd.io", "Kustomization"},
		{"helm.toolkit.fluxcd.io", "HelmRelease"},
		{"source.toolkit.fluxcd.io", "GitRepository"},
		{"source.toolkit.fluxcd.io", "OCIRepository"},
		{"source.toolkit.fluxcd.io", "HelmRepository"},
		{"source.toolkit.fluxcd.io", "HelmChart"},
		{"source.toolkit.fluxcd.io", "Bucket"},
		{"image.toolkit.fluxcd.io", "ImageRepository"},
		{"image.toolkit.fluxcd.io", "ImageUpdateAutomation"},
		{"notification.toolkit.fluxcd.io", "Receiver"},
	} {
		out[gk] = suspendable(true)
	}
	return out
}

// suspendable are the actions of a kind with spec.suspend: suspend and
// resume and, for Flux's kinds, reconcile.
func suspendable(reconcile bool) *builtinKind {
	b := &builtinKind{
		discover: func(obj map[string]any) []Action {
			suspended := boolField(obj, "spec", "suspend")
			out := []Action{
				{Name: ActionResume, Disabled: !suspended, IconClass: "fa fa-fw fa-play", DisplayName: "Resume"},
				{Name: ActionSuspend, Disabled: suspended, IconClass: "fa fa-fw fa-pause", DisplayName: "Suspend"},
			}
			if reconcile {
				// A suspended object ignores the request.
				out = append(out, Action{Name: ActionReconcile, Disabled: suspended, IconClass: "fa fa-fw fa-sync", DisplayName: "Reconcile"})
			}
			return out
		},
		run: map[string]builtinAction{
			ActionSuspend: setField(true, "spec", "suspend"),
			ActionResume:  setField(false, "spec", "suspend"),
		},
	}
	if reconcile {
		b.run[ActionReconcile] = setAnnotation(FluxReconcileAnnotation, func(now time.Time) string { return now.UTC().Format(time.RFC3339Nano) })
	}
	return b
}

// annotation reads one annotation of obj.
func annotation(obj map[string]any, key string) string {
	v, _, _ := unstructured.NestedString(obj, "metadata", "annotations", key)
	return v
}

// setAnnotation returns an action that sets an annotation to value(now).
func setAnnotation(key string, value func(time.Time) string) builtinAction {
	return func(obj map[string]any, _ map[string]string, now time.Time) (any, error) {
		if err := unstructured.SetNestedField(obj, value(now), "metadata", "annotations", key); err != nil {
			return nil, err
		}
		return obj, nil
	}
}

// removeAnnotation returns an action that removes an annotation.
func removeAnnotation(key string) builtinAction {
	return func(obj map[string]any, _ map[string]string, _ time.Time) (any, error) {
		unstructured.RemoveNestedField(obj, "metadata", "annotations", key)
		return obj, nil
	}
}

// setTime returns an action that sets a field to now (RFC 3339, UTC).
func setTime(fields ...string) builtinAction {
	return func(obj map[string]any, _ map[string]string, now time.Time) (any, error) {
		if err := unstructured.SetNestedField(obj, now.UTC().Format(time.RFC3339), fields...); err != nil {
			return nil, err
		}
		return obj, nil
	}
}
