// Package appops changes Applications the way Argo CD's API does: create
// (or upsert), delete with or without cascade, request a sync or a
// rollback, terminate the running operation, and ask for a refresh. It
// writes the Kubernetes objects the controller acts on and nothing else;
// the API and the CLI share it.
//
// It also holds the rules of those requests, so that the resolvers only
// authorize, call and map: which manifests are valid Applications and
// AppProjects (DecodeApplication, DecodeProject, DecodeSpec), what a merge
// or JSON patch may change (Patch), and the records of project role
// tokens (AddProjectToken, RemoveProjectToken). An *InvalidError is a
// request the client must change.
//
// Every write is reported to the audit trail of its context (see
// audit.Change).
//
// Every write is optimistic: it reads the current object, checks the
// request against it (say, no operation already running) and writes with
// its resourceVersion, retrying when someone else wrote in between.
package appops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
)

// Errors the caller shows the user as they are.
var (
	// ErrOperationInProgress: a sync or rollback is already requested or
	// running.
	ErrOperationInProgress = errors.New("another operation is already in progress")
	// ErrNoOperation: terminate found nothing running.
	ErrNoOperation = errors.New("no operation is in progress")
	// ErrRollbackAutoSync: a rollback would be undone by auto-sync at once.
	ErrRollbackAutoSync = errors.New("rollback cannot be initiated when auto-sync is enabled")
	// ErrNoHistory: the history holds no entry with the id asked for.
	ErrNoHistory = errors.New("no history entry with that id")
	// ErrNoSource: a sync names a source position the app does not have.
	ErrNoSource = errors.New("no source at that position")
)

// Values of the refresh annotation the controller honours.
const (
	// RefreshNormal compares again with the cached manifests of the
	// revision; RefreshHard renders the manifests again.
	RefreshNormal = v1alpha1.RefreshNormal
	RefreshHard   = v1alpha1.RefreshHard
)

// Service writes Applications through a Kubernetes client.
type Service struct {
	Client client.Client
}

// Get reads the app at key from the API server, nil when there is none.
func (s Service) Get(ctx context.Context, key types.NamespacedName) (*v1alpha1.Application, error) {
	return getObject[v1alpha1.Application](ctx, s.Client, key)
}

// Create creates app. When the name is taken, mayReplace first judges the
// existing app as read for this very write (so a concurrent change cannot
// slip past it) and its error ends Create; then, with upsert, the existing
// app gets app's spec, labels and annotations (its status and operation
// stay), and without, Create returns an AlreadyExists error.
//
// The approvals of a held sync are never taken from app (see
// keptApprovals): a new app has none, an upserted one keeps its own.
func (s Service) Create(ctx context.Context, app *v1alpha1.Application, upsert bool, mayReplace func(existing *v1alpha1.Application) error) (*v1alpha1.Application, error) {
	app = app.DeepCopy()
	approvalsOf(nil).restore(app)
	return createObject(ctx, s.Client, app, "applications", upsert, mayReplace, func(cur, app *v1alpha1.Application) {
		kept := approvalsOf(cur)
		cur.Spec = app.Spec
		cur.Labels, cur.Annotations = app.Labels, app.Annotations
		kept.restore(cur)
	})
}

// Update lets change modify the app at key and writes it back, retrying
// with a fresh read on conflicts (so change must be repeatable). An error
// from change ends it without writing. The approvals of a held sync stay
// as they are, whatever change does (see keptApprovals).
func (s Service) Update(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.Application) error) (*v1alpha1.Application, error) {
	return s.update(ctx, key, func(cur *v1alpha1.Application) error {
		kept := approvalsOf(cur)
		if err := change(cur); err != nil {
			return err
		}
		kept.restore(cur)
		return nil
	})
}

// Delete deletes the app at key. With cascade its resources are deleted
// first (by the controller, through a finalizer; background propagation
// when policy says so); without, they stay in the cluster.
func (s Service) Delete(ctx context.Context, key types.NamespacedName, cascade bool, policy metav1.DeletionPropagation) error {
	deleted, err := s.update(ctx, key, func(cur *v1alpha1.Application) error {
		fins := slices.DeleteFunc(slices.Clone(cur.Finalizers), func(f string) bool {
			return f == v1alpha1.ArgoResourcesFinalizer || f == v1alpha1.ArgoResourcesFinalizerBackground || f == v1alpha1.ResourcesFinalizer
		})
		if cascade {
			fin := v1alpha1.ArgoResourcesFinalizer
			if policy == metav1.DeletePropagationBackground {
				fin = v1alpha1.ArgoResourcesFinalizerBackground
			}
			fins = append(fins, fin)
		}
		cur.Finalizers = fins
		return nil
	})
	if err != nil {
		return err
	}
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := s.Client.Delete(ctx, app); err != nil {
		return client.IgnoreNotFound(err)
	}
	audit.Change(ctx, deleted, nil)
	return nil
}

// Sync requests a sync of the app at key: the controller runs op. It
// refuses while another operation is requested or running, and a sync of
// local manifests (op.Sync.Manifests, see CheckLocalManifests) other than
// a dry run while automated sync is on. For a
// multi-source app, op's revision is the revision of the source at
// sourcePosition (from 1; 0 is the first), as Argo CD's --revisions with
// --source-positions: the other sources sync at their target revisions.
func (s Service) Sync(ctx context.Context, key types.NamespacedName, op v1alpha1.Operation, sourcePosition int) (*v1alpha1.Application, error) {
	return s.update(ctx, key, func(cur *v1alpha1.Application) error {
		// Before the running operation: with auto-sync on there is
		// usually one, and waiting for it would not help.
		if len(op.Sync.Manifests) > 0 && !op.Sync.DryRun && autoSyncOn(cur) {
			return ErrLocalAutoSync
		}
		if operationActive(cur) {
			return ErrOperationInProgress
		}
		sync := *op.Sync
		if err := placeRevision(cur, &sync, sourcePosition); err != nil {
			return err
		}
		next := op
		next.Sync = &sync
		cur.Operation = &next
		carryTrace(ctx, cur)
		return nil
	})
}

// placeRevision moves sync's revision to the position of its source in a
// multi-source app (sync.revisions), and checks sourcePosition against
// app's sources.
func placeRevision(app *v1alpha1.Application, sync *v1alpha1.SyncOperation, sourcePosition int) error {
	n := len(app.Spec.Sources)
	if n == 0 {
		n = 1
	}
	if sourcePosition < 0 || sourcePosition > n {
		return fmt.Errorf("%w %d: the application has %d", ErrNoSource, sourcePosition, n)
	}
	if len(app.Spec.Sources) == 0 || sync.Revision == "" {
		return nil
	}
	pos := max(sourcePosition, 1)
	sync.Revisions = make([]string, len(app.Spec.Sources))
	sync.Revisions[pos-1], sync.Revision = sync.Revision, ""
	return nil
}

// Rollback requests a sync back to the revision and source (or the
// revisions and sources, for a multi-source app) of history entry id. It refuses while auto-sync is on (it would sync straight back
// to Git) and while another operation is requested or running.
func (s Service) Rollback(ctx context.Context, key types.NamespacedName, id int64, sync v1alpha1.SyncOperation, by v1alpha1.OperationInitiator) (*v1alpha1.Application, error) {
	return s.update(ctx, key, func(cur *v1alpha1.Application) error {
		if autoSyncOn(cur) {
			return ErrRollbackAutoSync
		}
		if operationActive(cur) {
			return ErrOperationInProgress
		}
		i := slices.IndexFunc(cur.Status.History, func(h v1alpha1.RevisionHistory) bool { return h.ID == id })
		if i < 0 {
			return fmt.Errorf("%w %d", ErrNoHistory, id)
		}
		entry := cur.Status.History[i]
		if len(entry.Sources) > 0 {
			sync.Revisions, sync.Sources = entry.Revisions, entry.Sources
		} else {
			src := entry.Source
			sync.Revision, sync.Source = entry.Revision, &src
		}
		cur.Operation = &v1alpha1.Operation{Sync: &sync, InitiatedBy: by}
		carryTrace(ctx, cur)
		return nil
	})
}

// Terminate asks the controller to stop the running operation of the app
// at key (as Argo CD does, by setting its phase to Terminating). An
// operation requested but not started yet is withdrawn instead.
func (s Service) Terminate(ctx context.Context, key types.NamespacedName) (*v1alpha1.Application, error) {
	var out *v1alpha1.Application
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &v1alpha1.Application{}
		if err := s.Client.Get(ctx, key, cur); err != nil {
			return err
		}
		audit.Touch(ctx, cur)
		before := cur.DeepCopy()
		st := cur.Status.OperationState
		switch {
		case st != nil && st.Phase == v1alpha1.OperationRunning:
			st.Phase = v1alpha1.OperationTerminating
			if err := s.Client.Status().Update(ctx, cur); err != nil {
				return err
			}
		case st != nil && st.Phase == v1alpha1.OperationTerminating:
			// Already asked.
		case cur.Operation != nil:
			cur.Operation = nil
			if err := s.Client.Update(ctx, cur); err != nil {
				return err
			}
		default:
			return ErrNoOperation
		}
		audit.Change(ctx, before, cur)
		out = cur
		return nil
	})
	return out, err
}

// Refresh asks the controller to compare the app at key again now; hard
// also renders its manifests again instead of reusing cached ones.
func (s Service) Refresh(ctx context.Context, key types.NamespacedName, hard bool) (*v1alpha1.Application, error) {
	kind := RefreshNormal
	if hard {
		kind = RefreshHard
	}
	return s.update(ctx, key, func(cur *v1alpha1.Application) error {
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[v1alpha1.ArgoRefreshAnnotation] = kind
		cur.Annotations[v1alpha1.RefreshRequestedAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
		carryTrace(ctx, cur)
		return nil
	})
}

// update reads the app at key, lets change modify it, and writes it back
// with its resourceVersion, retrying on conflicts. An error from change
// ends it without writing.
func (s Service) update(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.Application) error) (*v1alpha1.Application, error) {
	return updateObject(ctx, s.Client, key, change)
}

// operationActive reports whether app has an operation requested or
// running (Running includes waiting for a retry, and Terminating).
func operationActive(app *v1alpha1.Application) bool {
	if app.Operation != nil {
		return true
	}
	st := app.Status.OperationState
	return st != nil && (st.Phase == v1alpha1.OperationRunning || st.Phase == v1alpha1.OperationTerminating)
}
