package health

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Most operators report through status.conditions in the manner kstatus
// describes: a Ready condition that is True once the object is reconciled
// and serving, False when reconciling failed, Unknown while work is under
// way; optionally Reconciling (work under way) and Stalled (the controller
// has given up until the spec changes). readiness reads that pattern, so
// each kind that follows it is one entry.

// readiness says how one kind reports its state through status.conditions.
type readiness struct {
	// ready is the condition type that means reconciled and serving;
	// "Ready" when empty.
	ready string
	// progressReasons are reasons of a False ready condition that mean the
	// work is under way, not failed (cert-manager's Pending, Strimzi's
	// Creating, ...).
	progressReasons []string
	// suspend is the path of a bool that, true, means Suspended
	// (spec.suspend for Flux and CNPG).
	suspend []string
}

// check judges obj. In order: suspended; the controller has not seen the
// latest generation (status.observedGeneration, or the ready condition's
// own observedGeneration, below metadata.generation); Stalled True is
// Degraded; the ready condition False is Degraded unless its reason is a
// progress reason; Reconciling True is Progressing; the ready condition
// True is Healthy; anything else, no status included, is Progressing.
func (r readiness) check(u *unstructured.Unstructured) Result {
	obj := u.Object
	if len(r.suspend) > 0 && boolField(obj, r.suspend...) {
		return Result{Status: StatusSuspended, Message: u.GetKind() + " is suspended"}
	}
	if res, lagging := generationLag(obj); lagging {
		return res
	}
	if c, ok := findCondition(obj, "Stalled"); ok && c.Status == "True" {
		return Result{Status: StatusDegraded, Message: c.text()}
	}
	typ := r.ready
	if typ == "" {
		typ = "Ready"
	}
	raw := rawCondition(obj, typ)
	if raw == nil {
		if c, ok := findCondition(obj, "Reconciling"); ok && c.Status == "True" {
			return Result{Status: StatusProgressing, Message: c.text()}
		}
		return Result{Status: StatusProgressing, Message: "Waiting for the " + typ + " condition"}
	}
	if g, ok := toInt(raw["observedGeneration"]); ok && g < intOr(obj, 0, "metadata", "generation") {
		return Result{Status: StatusProgressing, Message: "Waiting for the controller to observe the latest generation"}
	}
	c := toCondition(raw)
	switch {
	case c.Status == "False" && !slices.Contains(r.progressReasons, c.Reason):
		return Result{Status: StatusDegraded, Message: c.text()}
	case c.Status == "False":
		return Result{Status: StatusProgressing, Message: c.text()}
	}
	if rc, ok := findCondition(obj, "Reconciling"); ok && rc.Status == "True" {
		return Result{Status: StatusProgressing, Message: rc.text()}
	}
	if c.Status == "True" {
		return Result{Status: StatusHealthy, Message: c.text()}
	}
	if c.text() == "" {
		return Result{Status: StatusProgressing, Message: "Waiting for the " + typ + " condition"}
	}
	return Result{Status: StatusProgressing, Message: c.text()}
}

// readyCondition is the plain rule: Ready decides, as readiness.check
// describes.
var readyCondition = readiness{}.check

// generationLag reports Progressing when status.observedGeneration is set
// and below metadata.generation: the conditions describe an older spec.
// Kinds whose controller never sets observedGeneration are not held back.
func generationLag(obj map[string]any) (Result, bool) {
	observed, ok := intField(obj, "status", "observedGeneration")
	if !ok || observed >= intOr(obj, 0, "metadata", "generation") {
		return Result{}, false
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the controller to observe the latest generation"}, true
}

// rawCondition returns the condition of type typ as read, for the fields
// condition leaves out (observedGeneration, Cluster API's severity).
func rawCondition(obj map[string]any, typ string) map[string]any {
	for _, item := range sliceField(obj, "status", "conditions") {
		if c, ok := item.(map[string]any); ok && c["type"] == typ {
			return c
		}
	}
	return nil
}

// conditionTrue reports whether the condition of type typ is True.
func conditionTrue(obj map[string]any, typ string) (condition, bool) {
	c, ok := findCondition(obj, typ)
	return c, ok && c.Status == "True"
}

// text is what a person should read about c: its message, else its reason.
func (c condition) text() string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}

// phaseRule maps a status field holding a phase or state (Argo's
// status.phase, ACME's status.state) to a health. Phases not listed are
// Progressing.
type phaseRule struct {
	path                         []string // where the phase is
	message                      []string // where the message is
	healthy, degraded, suspended []string
}

func (p phaseRule) check(u *unstructured.Unstructured) Result {
	phase := stringField(u.Object, p.path...)
	msg := stringField(u.Object, p.message...)
	switch {
	case slices.Contains(p.healthy, phase):
		return Result{Status: StatusHealthy, Message: msg}
	case slices.Contains(p.degraded, phase):
		return Result{Status: StatusDegraded, Message: msg}
	case slices.Contains(p.suspended, phase):
		return Result{Status: StatusSuspended, Message: msg}
	case phase == "":
		return Result{Status: StatusProgressing, Message: "Waiting for the controller to report a phase"}
	}
	if msg == "" {
		msg = phase
	}
	return Result{Status: StatusProgressing, Message: msg}
}
