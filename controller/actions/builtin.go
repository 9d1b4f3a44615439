package actions

import (
	"fmt"
	"maps"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// builtinKind is the built-in actions of one kind, written in Go: discover
// lists them for an object, run holds each action, which gets a copy of the
// object it may change and returns it (a patch) or a list of
// {operation, resource}, as a script would.
type builtinKind struct {
	discover func(obj map[string]any) []Action
	run      map[string]builtinAction
}

type builtinAction func(obj map[string]any, params map[string]string, now time.Time) (any, error)

// Annotations the built-in actions write, as kubectl does.
const (
	// RestartedAtAnnotation on a pod template makes its controller roll
	// the pods, as `kubectl rollout restart` does.
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	// InstantiateAnnotation marks a Job created from a CronJob by hand, as
	// `kubectl create job --from=cronjob/...` does.
	InstantiateAnnotation = "cronjob.kubernetes.io/instantiate"
)

// Names of the built-in actions.
const (
	ActionRestart   = "restart"
	ActionScale     = "scale"
	ActionPause     = "pause"
	ActionResume    = "resume"
	ActionSuspend   = "suspend"
	ActionCreateJob = "create-job"
)

// builtins are the built-in actions by group and kind: the core kinds'
// and the operators'.
var builtins = func() map[groupKind]*builtinKind {
	all := operatorBuiltins()
	maps.Copy(all, coreBuiltins)
	return all
}()

// coreBuiltins are the built-in actions of Kubernetes' own kinds.
var coreBuiltins = map[groupKind]*builtinKind{
	{"apps", "Deployment"}: {
		discover: func(obj map[string]any) []Action {
			paused := boolField(obj, "spec", "paused")
			return []Action{
				{Name: ActionPause, Disabled: paused, IconClass: "fa fa-fw fa-pause-circle", DisplayName: "Pause rollout"},
				{Name: ActionRestart, Disabled: paused, IconClass: "fa fa-fw fa-redo", DisplayName: "Restart"},
				{Name: ActionResume, Disabled: !paused, IconClass: "fa fa-fw fa-play-circle", DisplayName: "Resume rollout"},
				scaleAction(obj),
			}
		},
		run: map[string]builtinAction{
			ActionRestart: restart,
			ActionScale:   scale,
			ActionPause:   setField(true, "spec", "paused"),
			ActionResume:  setField(false, "spec", "paused"),
		},
	},
	{"apps", "StatefulSet"}: {
		discover: func(obj map[string]any) []Action {
			return []Action{
				{Name: ActionRestart, IconClass: "fa fa-fw fa-redo", DisplayName: "Restart"},
				scaleAction(obj),
			}
		},
		run: map[string]builtinAction{ActionRestart: restart, ActionScale: scale},
	},
	{"apps", "DaemonSet"}: {
		discover: func(map[string]any) []Action {
			return []Action{{Name: ActionRestart, IconClass: "fa fa-fw fa-redo", DisplayName: "Restart"}}
		},
		run: map[string]builtinAction{ActionRestart: restart},
	},
	{"batch", "CronJob"}: {
		discover: func(obj map[string]any) []Action {
			suspended := boolField(obj, "spec", "suspend")
			_, hasTemplate, _ := unstructured.NestedMap(obj, "spec", "jobTemplate")
			return []Action{
				{Name: ActionCreateJob, Disabled: !hasTemplate, IconClass: "fa fa-fw fa-plus", DisplayName: "Create Job"},
				{Name: ActionResume, Disabled: !suspended, IconClass: "fa fa-fw fa-play", DisplayName: "Resume"},
				{Name: ActionSuspend, Disabled: suspended, IconClass: "fa fa-fw fa-pause", DisplayName: "Suspend"},
			}
		},
		run: map[string]builtinAction{
			ActionSuspend:   setField(true, "spec", "suspend"),
			ActionResume:    setField(false, "spec", "suspend"),
			ActionCreateJob: createJob,
		},
	},
}

func boolField(obj map[string]any, fields ...string) bool {
	b, _, _ := unstructured.NestedBool(obj, fields...)
	return b
}

// replicas reads spec.replicas; unset means 1, as the API server defaults
// it.
func replicas(obj map[string]any) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, "spec", "replicas")
	if !ok {
		return 1
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 1
}

// scaleAction offers scale with the current replica count as default.
func scaleAction(obj map[string]any) Action {
	return Action{
		Name: ActionScale, IconClass: "fa fa-fw fa-arrows-alt-v", DisplayName: "Scale",
		Params: []Param{{Name: "replicas", Type: ParamInteger, Default: strconv.FormatInt(replicas(obj), 10)}},
	}
}

// restart sets the pod template's restartedAt annotation to now.
func restart(obj map[string]any, _ map[string]string, now time.Time) (any, error) {
	if err := unstructured.SetNestedField(obj, now.UTC().Format(time.RFC3339), "spec", "template", "metadata", "annotations", RestartedAtAnnotation); err != nil {
		return nil, fmt.Errorf("set the pod template's annotation: %w", err)
	}
	return obj, nil
}

// scale sets spec.replicas to the replicas parameter.
func scale(obj map[string]any, params map[string]string, _ time.Time) (any, error) {
	n, err := strconv.ParseInt(params["replicas"], 10, 32)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("%w replicas: %q is not a whole number of at least 0", ErrBadParam, params["replicas"])
	}
	if err := unstructured.SetNestedField(obj, n, "spec", "replicas"); err != nil {
		return nil, err
	}
	return obj, nil
}

// setField returns an action that sets a boolean field.
func setField(value bool, fields ...string) builtinAction {
	return func(obj map[string]any, _ map[string]string, _ time.Time) (any, error) {
		if err := unstructured.SetNestedField(obj, value, fields...); err != nil {
			return nil, err
		}
		return obj, nil
	}
}

// maxJobName keeps a Job's name short enough for the job-name label its
// pods get.
const maxJobName = 63

// createJob returns a Job to create from the CronJob's jobTemplate, as
// `kubectl create job --from=cronjob/NAME` builds it: named
// <cronjob>-<suffix> (the suffix from the clock, in base 36), with the
// template's labels and annotations, the instantiate annotation, and the
// CronJob as controlling owner when its uid is known.
func createJob(obj map[string]any, _ map[string]string, now time.Time) (any, error) {
	tmpl, ok, _ := unstructured.NestedMap(obj, "spec", "jobTemplate")
	if !ok {
		return nil, fmt.Errorf("the CronJob has no spec.jobTemplate")
	}
	cron := &unstructured.Unstructured{Object: obj}
	suffix := "-" + strconv.FormatInt(now.UnixMilli(), 36)
	base := cron.GetName()
	if len(base)+len(suffix) > maxJobName {
		base = base[:maxJobName-len(suffix)]
	}
	job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "batch/v1", "kind": "Job"}}
	job.SetName(base + suffix)
	job.SetNamespace(cron.GetNamespace())
	labels, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels")
	if len(labels) > 0 {
		job.SetLabels(labels)
	}
	annotations, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "annotations")
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[InstantiateAnnotation] = "manual"
	job.SetAnnotations(annotations)
	if uid := string(cron.GetUID()); uid != "" {
		_ = unstructured.SetNestedSlice(job.Object, []any{map[string]any{
			"apiVersion": cron.GetAPIVersion(), "kind": cron.GetKind(), "name": cron.GetName(), "uid": uid,
			"controller": true, "blockOwnerDeletion": true,
		}}, "metadata", "ownerReferences")
	}
	if spec, ok, _ := unstructured.NestedMap(tmpl, "spec"); ok {
		job.Object["spec"] = spec
	}
	return []any{map[string]any{"operation": string(OperationCreate), "resource": job.Object}}, nil
}
