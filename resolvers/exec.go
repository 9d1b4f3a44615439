package resolvers

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/internal/appstate"
)

// ExecRequest names the container a terminal runs a shell in: a Pod of
// the application App's resource tree.
type ExecRequest struct {
	App                       types.NamespacedName
	Namespace, Pod, Container string
}

// ExecTarget is what a terminal that ExecAllowed admits runs against.
type ExecTarget struct {
	// Project is the app's project, for the session's record.
	Project string
	// Destination is the cluster (and namespace) of the app.
	Destination v1alpha1.ApplicationDestination
}

// ExecAllowed authorizes a terminal into the container of req, in Argo
// CD's terms: "exec, create, <project>/<app>" on an app the caller may
// see, whose resource tree holds the pod. The API server's terminal asks
// it when a session opens and again whenever the policy changes. Its
// errors are *Error, safe to show.
func (r *Resolver) ExecAllowed(ctx context.Context, req ExecRequest) (ExecTarget, error) {
	app, err := r.appFor(ctx, rbac.ResourceExec, rbac.ActionCreate, req.App)
	if err != nil {
		return ExecTarget{}, err
	}
	var st *appstate.State
	if r.States != nil {
		states, err := r.States.GetMany(ctx, []types.NamespacedName{req.App})
		if err != nil {
			return ExecTarget{}, &Error{Code: CodeInternal, Message: "could not read the application's resources", Err: err}
		}
		st = states[0]
	}
	if !podInTree(st, req.Namespace, req.Pod) {
		return ExecTarget{}, Errorf(CodeNotFound, "pod %s/%s is not part of application %s", req.Namespace, req.Pod, app.Name)
	}
	return ExecTarget{Project: app.ProjectName(), Destination: app.Spec.Destination}, nil
}

// Changed returns a channel closed at the next change of the policy or
// of a project's roles; nil (never ready) without an Authorizer.
func (r *Resolver) Changed() <-chan struct{} { return r.policyChanged() }

// podInTree reports whether st's resource tree holds the live pod
// namespace/name: the pods whose logs and terminals an app gives.
func podInTree(st *appstate.State, namespace, name string) bool {
	return st != nil && slices.ContainsFunc(st.Tree, func(n appstate.Node) bool {
		return n.Kind == "Pod" && n.Group == "" && n.Namespace == namespace && n.Name == name && !n.Missing
	})
}
