package appset

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Bounds of a set's status, which must fit one etcd object with the
// set: a set of 10,000 Applications lists the elements that need a look
// (failed, skipped, written, kept) before the unchanged ones.
const (
	// maxStatusEntries bounds status.generated and status.resources.
	maxStatusEntries = 2000
	// maxParamsText bounds one element's parameters as JSON.
	maxParamsText = 1024
	// maxStatusParams bounds the parameters of all elements; past it
	// they are left out.
	maxStatusParams = 256 << 10
)

// paramsJSON is params as compact JSON, shortened past maxParamsText.
func paramsJSON(params map[string]any) string {
	b, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	if len(b) > maxParamsText {
		return string(b[:maxParamsText]) + "…"
	}
	return string(b)
}

// writeStatus records the plan's outcome in the set's status, unless it
// is what the status already says.
func (r *Reconciler) writeStatus(ctx context.Context, set *v1alpha1.ApplicationSet, p *plan) error {
	next := status(p)
	keepTransitions(set.Status.Conditions, next.Conditions)
	if equality.Semantic.DeepEqual(set.Status, next) {
		return nil
	}
	set = set.DeepCopy()
	set.Status = next
	err := r.client.Status().Update(ctx, set)
	if !apierrors.IsConflict(err) || r.opts.APIReader == nil {
		return err
	}
	// The cache may not have seen the last status write yet. The status
	// is all the controller's: write it over the latest version, unless
	// the spec changed meanwhile (that change generates again).
	var latest v1alpha1.ApplicationSet
	if err := r.opts.APIReader.Get(ctx, client.ObjectKeyFromObject(set), &latest); err != nil {
		return err
	}
	if latest.Generation != set.Generation {
		return err
	}
	latest.Status = next
	return r.client.Status().Update(ctx, &latest)
}

// status is the set's status after the plan ran.
func status(p *plan) v1alpha1.ApplicationSetStatus {
	var out v1alpha1.ApplicationSetStatus
	out.Conditions = conditions(p)
	if p.genErr != nil {
		out.Resources = resources(p.owned, nil)
		out.ResourcesCount = int64(len(p.owned))
		return out
	}
	out.Resources = resources(p.owned, p.steps)
	out.ResourcesCount = int64(len(out.Resources))
	out.Generated = generated(p.steps)
	if len(out.Resources) > maxStatusEntries {
		out.Resources = out.Resources[:maxStatusEntries]
	}
	if p.rollout != nil {
		out.ApplicationStatus = p.rollout
		if len(out.ApplicationStatus) > maxStatusEntries {
			out.ApplicationStatus = out.ApplicationStatus[:maxStatusEntries]
		}
		out.Conditions = append(out.Conditions, rolloutCondition(p.rollout))
	}
	return out
}

// rolloutCondition is RolloutProgressing: true while an Application is
// not Healthy, naming the first step that is not done.
func rolloutCondition(apps []v1alpha1.ApplicationSetApplicationStatus) v1alpha1.ApplicationSetCondition {
	step := 0
	for _, a := range apps {
		if n, err := strconv.Atoi(a.Step); err == nil && a.Status != rolloutHealthy && (step == 0 || n < step) {
			step = n
		}
	}
	if step == 0 {
		return v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionRolloutProgressing, Status: metav1.ConditionFalse,
			Reason: "ApplicationSetRolloutComplete", Message: "every Application a step selects is synced and Healthy"}
	}
	return v1alpha1.ApplicationSetCondition{Type: v1alpha1.ApplicationSetConditionRolloutProgressing, Status: metav1.ConditionTrue,
		Reason: "ApplicationSetModified", Message: "the rollout is at step " + strconv.Itoa(step)}
}

// generated lists the steps' entries, those that need a look first,
// within the status bounds.
func generated(steps []*step) []v1alpha1.ApplicationSetGeneratedApp {
	order := func(a v1alpha1.ApplicationSetAction) int {
		switch a {
		case v1alpha1.ApplicationSetFailed:
			return 0
		case v1alpha1.ApplicationSetSkipped, v1alpha1.ApplicationSetKept:
			return 1
		case v1alpha1.ApplicationSetUnchanged:
			return 3
		}
		return 2
	}
	entries := make([]v1alpha1.ApplicationSetGeneratedApp, len(steps))
	for i, s := range steps {
		entries[i] = s.entry
	}
	slices.SortStableFunc(entries, func(a, b v1alpha1.ApplicationSetGeneratedApp) int {
		return cmp.Compare(order(a.Action), order(b.Action))
	})
	if len(entries) > maxStatusEntries {
		entries = entries[:maxStatusEntries]
	}
	budget := maxStatusParams
	for i := range entries {
		if budget -= len(entries[i].Params); budget < 0 {
			entries[i].Params = ""
		}
	}
	return entries
}

// resources are the Applications the set owns after the steps ran, by
// name.
func resources(owned []v1alpha1.Application, steps []*step) []v1alpha1.ApplicationSetResourceStatus {
	gone := map[string]bool{}
	var out []v1alpha1.ApplicationSetResourceStatus
	for _, s := range steps {
		switch s.entry.Action {
		case v1alpha1.ApplicationSetDeleted:
			gone[s.entry.Name] = true
		case v1alpha1.ApplicationSetCreated:
			out = append(out, resource(s.write))
		}
	}
	for i := range owned {
		if !gone[owned[i].Name] {
			out = append(out, resource(&owned[i]))
		}
	}
	slices.SortFunc(out, func(a, b v1alpha1.ApplicationSetResourceStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func resource(app *v1alpha1.Application) v1alpha1.ApplicationSetResourceStatus {
	out := v1alpha1.ApplicationSetResourceStatus{
		Group: v1alpha1.GroupName, Version: v1alpha1.GroupVersion.Version, Kind: "Application",
		Namespace: app.Namespace, Name: app.Name, Status: app.Status.Sync.Status,
	}
	if app.Status.Health.Status != "" {
		h := app.Status.Health
		out.Health = &h
	}
	return out
}

// conditions are the set's conditions, as Argo CD names them.
func conditions(p *plan) []v1alpha1.ApplicationSetCondition {
	cond := func(t v1alpha1.ApplicationSetConditionType, status bool, reason, message string) v1alpha1.ApplicationSetCondition {
		s := metav1.ConditionFalse
		if status {
			s = metav1.ConditionTrue
		}
		return v1alpha1.ApplicationSetCondition{Type: t, Status: s, Reason: reason, Message: message}
	}
	if p.genErr != nil {
		msg := p.genErr.Error()
		return []v1alpha1.ApplicationSetCondition{
			cond(v1alpha1.ApplicationSetConditionErrorOccurred, true, "ApplicationGenerationFromParamsError", msg),
			cond(v1alpha1.ApplicationSetConditionParametersGenerated, false, "ErrorOccurred", msg),
			cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, false, "ErrorOccurred", msg),
		}
	}
	var failed []*step
	for _, s := range p.steps {
		if s.entry.Action == v1alpha1.ApplicationSetFailed {
			failed = append(failed, s)
		}
	}
	generatedOK := cond(v1alpha1.ApplicationSetConditionParametersGenerated, true, "ParametersGenerated", "Successfully generated parameters for all Applications")
	if len(failed) == 0 {
		return []v1alpha1.ApplicationSetCondition{
			cond(v1alpha1.ApplicationSetConditionErrorOccurred, false, "ApplicationSetUpToDate", "All applications have been generated successfully"),
			generatedOK,
			cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, true, "ApplicationSetUpToDate", "All applications have been generated successfully"),
		}
	}
	first := failed[0].entry
	what := "the element " + first.Params
	if first.Name != "" {
		what = "application " + first.Name
	}
	msg := fmt.Sprintf("%d of %d elements failed (see status.generated); %s of generator %d: %s", len(failed), len(p.steps), what, first.Generator, first.Message)
	return []v1alpha1.ApplicationSetCondition{
		cond(v1alpha1.ApplicationSetConditionErrorOccurred, true, "ApplicationGenerationFromParamsError", msg),
		generatedOK,
		cond(v1alpha1.ApplicationSetConditionResourcesUpToDate, false, "ApplicationGenerationFromParamsError", msg),
	}
}

// keepTransitions carries each condition's last transition time over
// from prev when its status did not change, and stamps the others now.
func keepTransitions(prev, next []v1alpha1.ApplicationSetCondition) {
	now := metav1.Now()
	for i := range next {
		next[i].LastTransitionTime = &now
		for _, p := range prev {
			if p.Type == next[i].Type && p.Status == next[i].Status && p.LastTransitionTime != nil {
				next[i].LastTransitionTime = p.LastTransitionTime
			}
		}
	}
}
