package resolvers

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/resourceversion"
)

// ApplicationWriter changes Applications (appops.Service implements it).
// Errors are appops's sentinel errors or Kubernetes API errors.
type ApplicationWriter interface {
	// Get reads the app at key, nil when there is none: mutations use it
	// for an app too new for the API's index.
	Get(ctx context.Context, key types.NamespacedName) (*v1alpha1.Application, error)
	// Create creates app; when its name is taken, mayReplace judges the
	// existing app first (see appops.Service.Create).
	Create(ctx context.Context, app *v1alpha1.Application, upsert bool, mayReplace func(existing *v1alpha1.Application) error) (*v1alpha1.Application, error)
	Update(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.Application) error) (*v1alpha1.Application, error)
	Delete(ctx context.Context, key types.NamespacedName, cascade bool, policy metav1.DeletionPropagation) error
	Sync(ctx context.Context, key types.NamespacedName, op v1alpha1.Operation, sourcePosition int) (*v1alpha1.Application, error)
	Rollback(ctx context.Context, key types.NamespacedName, id int64, sync v1alpha1.SyncOperation, by v1alpha1.OperationInitiator) (*v1alpha1.Application, error)
	Terminate(ctx context.Context, key types.NamespacedName) (*v1alpha1.Application, error)
	Refresh(ctx context.Context, key types.NamespacedName, hard bool) (*v1alpha1.Application, error)
}

func (r *Resolver) writer() (ApplicationWriter, error) {
	if r.Writer == nil {
		return nil, Errorf(CodeForbidden, "this server is read-only")
	}
	return r.Writer, nil
}

// initiator is who the request comes from, for operations and history.
func initiator(ctx context.Context) v1alpha1.OperationInitiator {
	if p, ok := auth.FromContext(ctx); ok {
		// An SSO user's subject is often an opaque ID; their email says
		// who it was.
		if p.Email != "" {
			return v1alpha1.OperationInitiator{Username: p.Email}
		}
		return v1alpha1.OperationInitiator{Username: p.Subject}
	}
	return v1alpha1.OperationInitiator{Username: "anonymous"}
}

// refKey returns the key of ref.
func (r *Resolver) refKey(ref model.ApplicationRef) types.NamespacedName {
	return r.appKey(ref.Name, ref.Namespace)
}

// decodeApplication reads an Application manifest for this API's
// namespaces.
func (r *Resolver) decodeApplication(manifest string) (*v1alpha1.Application, error) {
	ns := appops.Namespaces{Default: r.Namespace}
	if r.AppNamespaces != nil {
		ns.Allowed = r.AppNamespaces.Allowed
	}
	app, err := appops.DecodeApplication(manifest, ns)
	return app, invalidInput(err)
}

// syncOperation turns a sync request into the operation the controller
// runs.
func syncOperation(ctx context.Context, in model.SyncApplicationInput) v1alpha1.Operation {
	sync := &v1alpha1.SyncOperation{Prune: in.Prune, DryRun: in.DryRun, SyncOptions: in.SyncOptions, Manifests: in.Manifests}
	if in.Revision != nil {
		sync.Revision = *in.Revision
	}
	for _, res := range in.Resources {
		sync.Resources = append(sync.Resources, v1alpha1.SyncOperationResource{
			Group: res.Group, Kind: res.Kind, Name: res.Name, Namespace: res.Namespace,
		})
	}
	switch {
	case in.Strategy != nil && *in.Strategy == model.SyncStrategyKindApply:
		sync.SyncStrategy = &v1alpha1.SyncStrategy{Apply: &v1alpha1.SyncStrategyApply{Force: in.Force}}
	case in.Force:
		sync.SyncStrategy = &v1alpha1.SyncStrategy{Hook: &v1alpha1.SyncStrategyHook{Force: true}}
	}
	op := v1alpha1.Operation{Sync: sync, InitiatedBy: initiator(ctx)}
	if rt := in.Retry; rt != nil {
		op.Retry = v1alpha1.RetryStrategy{Limit: int64(rt.Limit)}
		if rt.BackoffDuration != nil || rt.BackoffFactor != nil || rt.BackoffMaxDuration != nil {
			b := &v1alpha1.Backoff{}
			if rt.BackoffDuration != nil {
				b.Duration = *rt.BackoffDuration
			}
			if rt.BackoffFactor != nil {
				f := int64(*rt.BackoffFactor)
				b.Factor = &f
			}
			if rt.BackoffMaxDuration != nil {
				b.MaxDuration = *rt.BackoffMaxDuration
			}
			op.Retry.Backoff = b
		}
	}
	return op
}

// written maps the result of a write to the API's answer, once the index
// the queries read holds the write (see awaitIndexed).
func (r *Resolver) written(ctx context.Context, app *v1alpha1.Application, err error, key types.NamespacedName) (*model.Application, error) {
	if err != nil {
		return nil, writeError(err, key)
	}
	r.awaitIndexed(ctx, key, func(got *v1alpha1.Application) bool {
		return got != nil && resourceversion.AtLeast(got.ResourceVersion, app.ResourceVersion)
	})
	return &model.Application{Application: app}, nil
}

// indexWait bounds how long a mutation waits for the index to catch up
// with its write.
const indexWait = 2 * time.Second

// awaitIndexed waits until the app at key in the index the queries read
// satisfies done, for at most indexWait: a client that sends a query after
// a mutation's answer then reads what the mutation wrote, never the app
// as it was before. The index follows the API server through a watch and
// is usually a few milliseconds behind.
func (r *Resolver) awaitIndexed(ctx context.Context, key types.NamespacedName, done func(*v1alpha1.Application) bool) {
	if r.Apps == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	changes := r.Apps.Changes(ctx, key) // before the first look: no change is missed
	for !done(r.Apps.Get(key)) {
		select {
		case <-changes:
		case <-ctx.Done():
			return
		}
	}
}

// writeError maps a write's error to a coded error for the client. The
// Kubernetes API's validation messages name fields, never secrets, and
// are passed on.
func writeError(err error, key types.NamespacedName) error {
	var safe *Error
	switch {
	case errors.As(err, &safe):
		return err
	case errors.Is(err, appops.ErrOperationInProgress), errors.Is(err, appops.ErrNoOperation),
		errors.Is(err, appops.ErrRollbackAutoSync), errors.Is(err, appops.ErrLocalAutoSync):
		return Errorf(CodeConflict, "application %s: %v", key, err)
	case errors.Is(err, appops.ErrNoHistory), errors.Is(err, appops.ErrNoSource):
		return Errorf(CodeBadUserInput, "application %s: %v", key, err)
	case apierrors.IsNotFound(err):
		return Errorf(CodeNotFound, "application %s not found", key)
	case apierrors.IsAlreadyExists(err):
		return Errorf(CodeConflict, "application %s already exists (set upsert to update it)", key)
	case apierrors.IsConflict(err):
		return Errorf(CodeConflict, "application %s changed while being written; try again", key)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &Error{Code: CodeBadUserInput, Message: fmt.Sprintf("application %s: %s", key, statusMessage(err)), Err: err}
	}
	return err
}

// statusMessage returns the Kubernetes API's message of err.
func statusMessage(err error) string {
	if s, ok := errors.AsType[*apierrors.StatusError](err); ok {
		return s.Status().Message
	}
	return "rejected by the Kubernetes API"
}

// authorizeManifest authorizes creating app, and with upsert updating it
// too (Argo CD asks for both rights).
func (r *Resolver) authorizeManifest(ctx context.Context, app *v1alpha1.Application, upsert bool) error {
	object := appTarget(app)
	if err := r.authorize(ctx, rbac.ResourceApplications, rbac.ActionCreate, object); err != nil {
		return err
	}
	if upsert {
		return r.authorize(ctx, rbac.ResourceApplications, rbac.ActionUpdate, object)
	}
	return nil
}

// mayReplace judges, for creating app, the existing app of that name. An
// app the caller may not see answers as a create the caller may not do,
// so a name cannot be probed; replacing one (upsert) needs update on it
// where it is now, in its current project, as well as the rights on app
// that authorizeManifest checked: otherwise an upsert would move another
// project's app into the caller's and hand it over.
func (r *Resolver) mayReplace(ctx context.Context, app *v1alpha1.Application, upsert bool) func(*v1alpha1.Application) error {
	return func(existing *v1alpha1.Application) error {
		if !r.canSeeApp(ctx, existing) {
			return denied(rbac.ResourceApplications, rbac.ActionCreate, r.appObject(app))
		}
		if !upsert {
			return nil
		}
		return r.authorize(ctx, rbac.ResourceApplications, rbac.ActionUpdate, appTarget(existing))
	}
}

// propagation maps the API's propagation policy to Kubernetes'.
func propagation(p model.PropagationPolicy) metav1.DeletionPropagation {
	if p == model.PropagationPolicyBackground {
		return metav1.DeletePropagationBackground
	}
	return metav1.DeletePropagationForeground
}

// keyOf returns app's namespace and name.
func keyOf(app *v1alpha1.Application) types.NamespacedName {
	return types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
}

// authorizeSync authorizes the sync in, on the app at key: sync, and
// also override when it carries local manifests (Argo CD's rule for
// app sync --local), which must be within appops' bounds.
func (r *Resolver) authorizeSync(ctx context.Context, key types.NamespacedName, in model.SyncApplicationInput) error {
	if err := r.authorizeApp(ctx, rbac.ActionSync, key); err != nil {
		return err
	}
	if in.Manifests == nil {
		return nil
	}
	if len(in.Manifests) == 0 {
		return Errorf(CodeBadUserInput, "manifests: empty; omit it to sync the source")
	}
	if err := r.authorizeApp(ctx, rbac.ActionOverride, key); err != nil {
		return err
	}
	if err := appops.CheckLocalManifests(in.Manifests); err != nil {
		return Errorf(CodeBadUserInput, "%v", err)
	}
	return nil
}
