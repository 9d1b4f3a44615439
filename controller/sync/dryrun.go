package sync

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// preflight validates every resource of the plan with the API server
// (dryRun=All) before the first task runs, as Argo CD does, so that an
// invalid resource fails the sync with nothing applied. Hooks are
// checked when they are created. Resources whose namespace or custom
// resource definition the sync itself creates cannot be checked yet and
// are skipped, as are those with SkipDryRunOnMissingResource whose type
// is not served.
func (s *step) preflight(ctx context.Context) {
	for _, en := range s.match(s.run.Plan.Tasks) {
		t := en.task
		if t.IsHook() || t.Prune || !s.checkable(t) {
			continue
		}
		if _, err := s.e.mapping(taskGVK(t)); err != nil && t.SyncOptions.SkipDryRunOnMissingResource {
			continue
		}
		name, _, err := s.apply(ctx, t, true)
		if err != nil {
			s.record(en, name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
		}
	}
}

// checkable reports whether t can be dry-run before the sync starts: its
// namespace and its type do not come from the plan itself.
func (s *step) checkable(t *Task) bool {
	for i := range s.run.Plan.Tasks {
		o := &s.run.Plan.Tasks[i]
		if o.Prune || o.Desired == nil {
			continue
		}
		if t.Namespace != "" && o.Group == "" && o.Kind == "Namespace" && o.Name == t.Namespace && o.Live == nil {
			return false
		}
		if o.Group == "apiextensions.k8s.io" && o.Kind == "CustomResourceDefinition" {
			group, _, _ := unstructured.NestedString(o.Desired.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Desired.Object, "spec", "names", "kind")
			if group == t.Group && kind == t.Kind {
				return false
			}
		}
	}
	return true
}

// dryRunAll runs the whole operation as a dry run in one step: every
// apply and prune goes to the API server with dryRun=All and nothing
// changes. Hooks are not run.
func (s *step) dryRunAll(ctx context.Context) (Result, error) {
	s.st.SyncResult.Resources = nil
	for _, en := range s.match(s.run.Plan.Tasks) {
		t := en.task
		switch {
		case t.IsHook():
			continue
		case t.Prune && t.PruneSkipped != "":
			s.record(en, t.Name, v1alpha1.ResultCodePruneSkipped, v1alpha1.OperationSucceeded, t.PruneSkipped)
		case t.Prune:
			msg, err := s.delete(ctx, t, true)
			if err != nil {
				s.record(en, t.Name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
				continue
			}
			s.record(en, t.Name, v1alpha1.ResultCodePruned, v1alpha1.OperationSucceeded, msg+" (dry run)")
		case !s.checkable(t):
			s.record(en, t.Name, v1alpha1.ResultCodeSynced, v1alpha1.OperationSucceeded, describe(t.Group, t.Kind, t.Name)+" not checked (dry run): its namespace or type is created by the sync")
		default:
			name, verb, err := s.apply(ctx, t, true)
			if err != nil {
				s.record(en, name, v1alpha1.ResultCodeSyncFailed, v1alpha1.OperationFailed, err.Error())
				continue
			}
			s.record(en, name, v1alpha1.ResultCodeSynced, v1alpha1.OperationSucceeded, describe(t.Group, t.Kind, name)+" "+verb+" (dry run)")
		}
	}
	if s.failed() {
		return s.finish(v1alpha1.OperationFailed, s.failureMessage()), nil
	}
	return s.finish(v1alpha1.OperationSucceeded, MessageSucceeded+" (dry run)"), nil
}
