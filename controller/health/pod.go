package health

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ignoreRestartPolicyAnnotation, set to "true" on a Pod, has it judged as a
// long-running pod whatever its restartPolicy, as in Argo CD: operators
// (KubeVirt, Flink, ArangoDB ...) run pods that live for ever with
// restartPolicy Never or OnFailure.
const ignoreRestartPolicyAnnotation = "argocd.argoproj.io/ignore-restart-policy"

// podHealth judges a Pod by its phase, its Ready condition and its
// containers.
//
// Pods that restart forever (restartPolicy Always, the default) are Degraded
// as soon as a container waits for a reason that needs a person
// (CrashLoopBackOff, ImagePullBackOff, ErrImagePull, CreateContainerConfigError
// ...). Pods with restartPolicy Never or OnFailure run to completion and are
// usually sync hooks: a waiting container is not judged (the sync's hook
// logic decides, and a fixed image must not make a finished sync run the
// hook late), and a running one is Progressing, not Healthy. The
// ignore-restart-policy annotation makes a pod of the second kind judged
// as one of the first, unless it is a sync hook, whose health must stay
// Progressing until it ends.
func podHealth(u *unstructured.Unstructured) Result {
	obj := u.Object
	restartPolicy := stringField(obj, "spec", "restartPolicy")
	if restartPolicy == "" {
		restartPolicy = "Always"
	}
	longRunning := restartPolicy == "Always" || (ignoresRestartPolicy(obj) && !isHook(u))
	message := stringField(obj, "status", "message")
	containers := sliceField(obj, "status", "containerStatuses")

	if longRunning {
		var msgs []string
		for _, item := range containers {
			cs, _ := item.(map[string]any)
			reason := stringField(cs, "state", "waiting", "reason")
			if waitingNeedsAttention(reason) {
				msg := stringField(cs, "state", "waiting", "message")
				if msg == "" {
					msg = fmt.Sprintf("container %q is waiting: %s", stringField(cs, "name"), reason)
				}
				msgs = append(msgs, msg)
			}
		}
		if len(msgs) > 0 {
			return Result{Status: StatusDegraded, Message: strings.Join(msgs, ", ")}
		}
	}

	switch stringField(obj, "status", "phase") {
	case "Pending":
		return Result{Status: StatusProgressing, Message: message}
	case "Succeeded":
		return Result{Status: StatusHealthy, Message: message}
	case "Failed":
		if message != "" {
			return Result{Status: StatusDegraded, Message: message}
		}
		for _, list := range [][]any{sliceField(obj, "status", "initContainerStatuses"), containers} {
			for _, item := range list {
				cs, _ := item.(map[string]any)
				if msg := terminatedMessage(cs); msg != "" {
					return Result{Status: StatusDegraded, Message: msg}
				}
			}
		}
		return Result{Status: StatusDegraded}
	case "Running":
		if !longRunning {
			return Result{Status: StatusProgressing, Message: message}
		}
		if c, ok := findCondition(obj, "Ready"); ok && c.Status == "True" {
			return Result{Status: StatusHealthy, Message: message}
		}
		for _, item := range containers {
			cs, _ := item.(map[string]any)
			if mapField(cs, "lastState", "terminated") != nil {
				return Result{Status: StatusDegraded, Message: message}
			}
		}
		return Result{Status: StatusProgressing, Message: message}
	}
	return Result{Status: StatusUnknown, Message: message}
}

// ignoresRestartPolicy reports whether the pod carries
// ignoreRestartPolicyAnnotation set to "true" (in any case).
func ignoresRestartPolicy(obj map[string]any) bool {
	v, _ := mapField(obj, "metadata", "annotations")[ignoreRestartPolicyAnnotation].(string)
	return strings.EqualFold(v, "true")
}

// waitingNeedsAttention reports whether a container waiting reason means the
// pod cannot start without a change: errors and back-offs, as opposed to
// ContainerCreating or PodInitializing.
func waitingNeedsAttention(reason string) bool {
	return strings.HasPrefix(reason, "Err") || strings.HasSuffix(reason, "Error") || strings.HasSuffix(reason, "BackOff")
}

// terminatedMessage explains why a terminated container failed, or returns
// "" when it did not.
func terminatedMessage(cs map[string]any) string {
	term := mapField(cs, "state", "terminated")
	if term == nil {
		return ""
	}
	if msg := stringField(term, "message"); msg != "" {
		return msg
	}
	if reason := stringField(term, "reason"); reason == "OOMKilled" {
		return reason
	}
	if code := intOr(term, 0, "exitCode"); code != 0 {
		return fmt.Sprintf("container %q failed with exit code %d", stringField(cs, "name"), code)
	}
	return ""
}
