package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/resourceversion"
)

// ApplicationSetStore reads ApplicationSets (catalog.Catalog implements
// it). The objects are shared: never modify them.
type ApplicationSetStore interface {
	// ApplicationSets returns every set, ordered by namespace and name.
	ApplicationSets(ctx context.Context) ([]*v1alpha1.ApplicationSet, error)
	// ApplicationSet returns the set at key, or nil.
	ApplicationSet(ctx context.Context, key types.NamespacedName) (*v1alpha1.ApplicationSet, error)
	// ApplicationSetChanges signals each change of the set at key until
	// ctx ends.
	ApplicationSetChanges(ctx context.Context, key types.NamespacedName) <-chan struct{}
}

// ApplicationSetWriter changes ApplicationSets (appops.Service implements
// it). Errors are Kubernetes API errors, or those of the callbacks.
type ApplicationSetWriter interface {
	// GetApplicationSet reads the set at key, nil when there is none.
	GetApplicationSet(ctx context.Context, key types.NamespacedName) (*v1alpha1.ApplicationSet, error)
	// CreateApplicationSet creates set; when its name is taken,
	// mayReplace judges the existing set first.
	CreateApplicationSet(ctx context.Context, set *v1alpha1.ApplicationSet, upsert bool, mayReplace func(existing *v1alpha1.ApplicationSet) error) (*v1alpha1.ApplicationSet, error)
	// UpdateApplicationSet writes what change makes of the set at key.
	UpdateApplicationSet(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.ApplicationSet) error) (*v1alpha1.ApplicationSet, error)
	// DeleteApplicationSet deletes the set at key once authorize accepts
	// it as read for the delete.
	DeleteApplicationSet(ctx context.Context, key types.NamespacedName, authorize func(*v1alpha1.ApplicationSet) error) error
}

// setTarget names set for authorize: its template's project, namespace
// and name.
func setTarget(set *v1alpha1.ApplicationSet) audit.Object {
	return audit.Object{Project: set.ProjectName(), Namespace: set.Namespace, Name: set.Name}
}

// setObject is the RBAC object of set: "<project>/<name>", or
// "<project>/<namespace>/<name>" outside the server's namespace.
func (r *Resolver) setObject(set *v1alpha1.ApplicationSet) string {
	return r.policyObject(rbac.ResourceApplicationSets, setTarget(set))
}

// canSeeSet reports whether the caller may get set: the API serves its
// namespace and RBAC allows get on it.
func (r *Resolver) canSeeSet(ctx context.Context, set *v1alpha1.ApplicationSet) bool {
	return r.served(set.Namespace) && r.can(ctx, rbac.ResourceApplicationSets, rbac.ActionGet, r.setObject(set))
}

// storedSet returns the set at key from the store, nil when there is none
// or the API does not serve its namespace.
func (r *Resolver) storedSet(ctx context.Context, key types.NamespacedName) (*v1alpha1.ApplicationSet, error) {
	if r.AppSets == nil || !r.served(key.Namespace) {
		return nil, nil
	}
	return r.AppSets.ApplicationSet(ctx, key)
}

// applicationSet returns the set at key when it exists and the caller may
// see it, else nil.
func (r *Resolver) applicationSet(ctx context.Context, key types.NamespacedName) (*model.ApplicationSet, error) {
	set, err := r.storedSet(ctx, key)
	if err != nil || set == nil || !r.canSeeSet(ctx, set) {
		return nil, err
	}
	return &model.ApplicationSet{ApplicationSet: set}, nil
}

// applicationSets returns the sets the caller may see that f selects.
func (r *Resolver) applicationSets(ctx context.Context, f *model.ApplicationSetFilter) ([]model.ApplicationSet, error) {
	if r.AppSets == nil {
		return nil, nil
	}
	all, err := r.AppSets.ApplicationSets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]model.ApplicationSet, 0, len(all))
	for _, set := range all {
		if setSelected(set, f) && r.canSeeSet(ctx, set) {
			out = append(out, model.ApplicationSet{ApplicationSet: set})
		}
	}
	return out, nil
}

// setSelected reports whether f (nil: everything) selects set.
func setSelected(set *v1alpha1.ApplicationSet, f *model.ApplicationSetFilter) bool {
	if f == nil {
		return true
	}
	switch {
	case len(f.Namespaces) > 0 && !slices.Contains(f.Namespaces, set.Namespace):
		return false
	case len(f.Projects) > 0 && !slices.Contains(f.Projects, set.ProjectName()):
		return false
	case f.Search != nil && !strings.Contains(strings.ToLower(set.Name), strings.ToLower(*f.Search)):
		return false
	}
	return true
}

func setKey(s model.ApplicationSet) string { return s.Namespace + "/" + s.Name }

// setApplications is a page of the Applications set controls that the
// caller may see.
func (r *Resolver) setApplications(ctx context.Context, set *v1alpha1.ApplicationSet, first int32, after *string) (*model.ApplicationConnection, error) {
	allow := r.appFilter(ctx)
	p, err := r.apps().Page(appindex.Query{
		First: int(first), After: deref(after),
		Filter: appindex.Filter{Namespaces: []string{set.Namespace}, Allow: func(app *v1alpha1.Application) bool {
			owner := metav1.GetControllerOfNoCopy(app)
			return owner != nil && owner.UID == set.UID && owner.Kind == "ApplicationSet" &&
				(allow == nil || allow(app))
		}},
	})
	if err != nil {
		return nil, pageError(err)
	}
	return connection(p), nil
}

// applicationSetYAML prints set as kubectl would, without managedFields.
func applicationSetYAML(set *v1alpha1.ApplicationSet) (string, error) {
	out := set.DeepCopy()
	out.APIVersion = v1alpha1.GroupVersion.String()
	out.Kind = "ApplicationSet"
	out.ManagedFields = nil
	b, err := yaml.Marshal(out)
	return string(b), err
}

// decodeApplicationSet reads an ApplicationSet manifest for this API's
// namespaces.
func (r *Resolver) decodeApplicationSet(manifest string) (*v1alpha1.ApplicationSet, error) {
	ns := appops.Namespaces{Default: r.Namespace}
	if r.AppNamespaces != nil {
		ns.Allowed = r.AppNamespaces.Allowed
	}
	set, err := appops.DecodeApplicationSet(manifest, ns)
	return set, invalidInput(err)
}

// authorizeSetSpec authorizes action (create or update) on set as its
// spec will be written, as Argo CD does: the right on the set's object,
// whose project is its template's, and on every other project a
// generator's template names. A project not known before generating (a
// placeholder, or a templatePatch that may set any) needs the right on
// every project: on "*/*" (so that the policy grants it for projects to
// come) and on each existing one (so that a deny rule for one is kept).
// A project written as it is must exist, as in Argo CD.
func (r *Resolver) authorizeSetSpec(ctx context.Context, set *v1alpha1.ApplicationSet, action string) error {
	projects, templated := appset.SetProjects(set)
	if templated {
		every := audit.Object{Project: "*", Namespace: set.Namespace, Name: "*"}
		if err := r.authorize(ctx, rbac.ResourceApplicationSets, action, every); err != nil {
			if safe, ok := errors.AsType[*Error](err); ok && safe.Code == CodeForbidden {
				return Errorf(CodeForbidden, "%s: the set's project is templated (or it has a templatePatch), which needs %s on every project",
					safe.Message, action)
			}
			return err
		}
		all, err := r.projectNames(ctx)
		if err != nil {
			return err
		}
		projects = append(projects, all...)
	}
	// The set's own object last: when everything is allowed, it is what
	// the audit trail names.
	for _, p := range projects[1:] {
		if strings.Contains(p, "{{") {
			continue
		}
		o := audit.Object{Project: p, Namespace: set.Namespace, Name: set.Name}
		if err := r.authorize(ctx, rbac.ResourceApplicationSets, action, o); err != nil {
			return err
		}
	}
	if err := r.authorize(ctx, rbac.ResourceApplicationSets, action, setTarget(set)); err != nil {
		return err
	}
	for _, p := range projects {
		if strings.Contains(p, "{{") {
			continue
		}
		if err := r.projectExists(ctx, p, set.Namespace); err != nil {
			return err
		}
	}
	return nil
}

// projectNames lists every project's name.
func (r *Resolver) projectNames(ctx context.Context) ([]string, error) {
	if r.Projects == nil {
		return nil, nil
	}
	all, err := r.Projects.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(all))
	for _, p := range all {
		out = append(out, p.Name)
	}
	return out, nil
}

// projectExists refuses a set whose Applications in namespace would name
// a project that does not exist there.
func (r *Resolver) projectExists(ctx context.Context, name, namespace string) error {
	if r.Projects == nil {
		return nil
	}
	probe := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}, Spec: v1alpha1.ApplicationSpec{Project: name}}
	p, err := r.findProject(ctx, probe)
	if err != nil {
		return err
	}
	if p == nil {
		return Errorf(CodeBadUserInput, "applicationset spec is invalid: project %s does not exist", truncate(name, 253))
	}
	return nil
}

func (r *Resolver) setWriter() (ApplicationSetWriter, error) {
	if r.AppSetWriter == nil {
		return nil, Errorf(CodeForbidden, "this server is read-only")
	}
	return r.AppSetWriter, nil
}

// createApplicationSet creates the set of a manifest (with upsert, or
// replaces the spec of the set of that name).
func (r *Resolver) createApplicationSet(ctx context.Context, in model.CreateApplicationSetInput) (*model.ApplicationSet, error) {
	set, err := r.decodeApplicationSet(in.Manifest)
	if err != nil {
		return nil, err
	}
	if err := r.authorizeSetSpec(ctx, set, rbac.ActionCreate); err != nil {
		return nil, err
	}
	if in.Upsert {
		if err := r.authorizeSetSpec(ctx, set, rbac.ActionUpdate); err != nil {
			return nil, err
		}
	}
	w, err := r.setWriter()
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: set.Namespace, Name: set.Name}
	out, err := w.CreateApplicationSet(ctx, set, in.Upsert, func(existing *v1alpha1.ApplicationSet) error {
		// A set the caller may not see answers as a create they may not
		// do, so that names cannot be probed; replacing one needs update
		// on it where it is now.
		if !r.canSeeSet(ctx, existing) {
			return denied(rbac.ResourceApplicationSets, rbac.ActionCreate, r.setObject(set))
		}
		if !in.Upsert {
			return nil
		}
		return r.authorize(ctx, rbac.ResourceApplicationSets, rbac.ActionUpdate, setTarget(existing))
	})
	return r.setWritten(ctx, out, err, key)
}

// updateApplicationSet replaces the spec of a set the caller may update,
// with one they may write.
func (r *Resolver) updateApplicationSet(ctx context.Context, in model.UpdateApplicationSetInput) (*model.ApplicationSet, error) {
	key := r.appKey(in.Name, in.Namespace)
	spec, err := appops.DecodeApplicationSetSpec(in.Spec)
	if err != nil {
		return nil, invalidInput(err)
	}
	w, err := r.setWriter()
	if err != nil {
		return nil, err
	}
	out, err := w.UpdateApplicationSet(ctx, key, func(cur *v1alpha1.ApplicationSet) error {
		if err := r.mayChangeSet(ctx, cur, rbac.ActionUpdate); err != nil {
			return err
		}
		next := cur.DeepCopy()
		next.Spec = spec
		if err := r.authorizeSetSpec(ctx, next, rbac.ActionUpdate); err != nil {
			return err
		}
		cur.Spec = spec
		return nil
	})
	return r.setWritten(ctx, out, err, key)
}

// deleteApplicationSet deletes a set the caller may delete.
func (r *Resolver) deleteApplicationSet(ctx context.Context, name string, namespace *string) (string, error) {
	key := r.appKey(name, namespace)
	w, err := r.setWriter()
	if err != nil {
		return "", err
	}
	err = w.DeleteApplicationSet(ctx, key, func(cur *v1alpha1.ApplicationSet) error {
		return r.mayChangeSet(ctx, cur, rbac.ActionDelete)
	})
	if err != nil {
		return "", setWriteError(err, key)
	}
	r.awaitSet(ctx, key, func(got *v1alpha1.ApplicationSet) bool { return got == nil || got.DeletionTimestamp != nil })
	return model.NodeID(model.KindApplicationSet, key), nil
}

// mayChangeSet authorizes action on the existing set cur, as read for the
// write: a set the caller may not see is not found for them.
func (r *Resolver) mayChangeSet(ctx context.Context, cur *v1alpha1.ApplicationSet, action string) error {
	if !r.canSeeSet(ctx, cur) {
		audit.Authorized(ctx, audit.Object{Kind: rbac.ResourceApplicationSets, Project: cur.ProjectName(), Namespace: cur.Namespace, Name: cur.Name}, false)
		if r.Authz != nil && !r.Authz.Authenticated(ctx) {
			return Errorf(CodeUnauthenticated, "log in first")
		}
		return Errorf(CodeNotFound, "applicationset %s/%s not found", cur.Namespace, cur.Name)
	}
	return r.authorize(ctx, rbac.ResourceApplicationSets, action, setTarget(cur))
}

// setWritten maps the result of a write to the API's answer, once the
// store the queries read holds the write.
func (r *Resolver) setWritten(ctx context.Context, set *v1alpha1.ApplicationSet, err error, key types.NamespacedName) (*model.ApplicationSet, error) {
	if err != nil {
		return nil, setWriteError(err, key)
	}
	r.awaitSet(ctx, key, func(got *v1alpha1.ApplicationSet) bool {
		return got != nil && resourceversion.AtLeast(got.ResourceVersion, set.ResourceVersion)
	})
	return &model.ApplicationSet{ApplicationSet: set}, nil
}

// awaitSet waits, for at most indexWait, until the set at key in the
// store the queries read satisfies done (see awaitIndexed).
func (r *Resolver) awaitSet(ctx context.Context, key types.NamespacedName, done func(*v1alpha1.ApplicationSet) bool) {
	if r.AppSets == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	changes := r.AppSets.ApplicationSetChanges(ctx, key) // before the first look: no change is missed
	for {
		got, err := r.AppSets.ApplicationSet(ctx, key)
		if err != nil || done(got) {
			return
		}
		select {
		case <-changes:
		case <-ctx.Done():
			return
		}
	}
}

// setWriteError maps a write's error to a coded error for the client.
func setWriteError(err error, key types.NamespacedName) error {
	var safe *Error
	switch {
	case errors.As(err, &safe):
		return err
	case apierrors.IsNotFound(err):
		return Errorf(CodeNotFound, "applicationset %s not found", key)
	case apierrors.IsAlreadyExists(err):
		return Errorf(CodeConflict, "applicationset %s already exists (set upsert to update it)", key)
	case apierrors.IsConflict(err):
		return Errorf(CodeConflict, "applicationset %s changed while being written; try again", key)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &Error{Code: CodeBadUserInput, Message: fmt.Sprintf("applicationset %s: %s", key, statusMessage(err)), Err: err}
	}
	return err
}

// streamApplicationSet sends the set at key now and after each change
// until ctx ends or the caller may no longer see it.
func (r *Resolver) streamApplicationSet(ctx context.Context, key types.NamespacedName, release func()) <-chan *model.ApplicationSet {
	changes := r.AppSets.ApplicationSetChanges(ctx, key)
	out := make(chan *model.ApplicationSet)
	go func() {
		defer close(out)
		defer release()
		send := true
		for {
			policy := r.policyChanged()
			set, err := r.storedSet(ctx, key)
			if err != nil || (set != nil && !r.canSeeSet(ctx, set)) {
				return
			}
			if send {
				var next *model.ApplicationSet
				if set != nil {
					next = &model.ApplicationSet{ApplicationSet: set}
				}
				select {
				case out <- next:
				case <-ctx.Done():
					return
				}
			}
			select {
			case <-changes:
				send = true
			case <-policy:
				send = false // only a check: the set did not change
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// subscribeApplicationSet starts the subscription to the set at key,
// which must exist and be visible to the caller.
func (r *Resolver) subscribeApplicationSet(ctx context.Context, key types.NamespacedName) (<-chan *model.ApplicationSet, error) {
	if r.Authz != nil && !r.Authz.Authenticated(ctx) {
		return nil, Errorf(CodeUnauthenticated, "log in first")
	}
	set, err := r.applicationSet(ctx, key)
	if err != nil {
		return nil, err
	}
	if set == nil {
		return nil, Errorf(CodeNotFound, "applicationset %s not found", key)
	}
	release, err := acquireSubscription(ctx)
	if err != nil {
		return nil, err
	}
	return r.streamApplicationSet(ctx, key, release), nil
}

// generatorsJSON is a set's generators as JSON, as written.
func generatorsJSON(gens []v1alpha1.ApplicationSetGenerator) (string, error) {
	if gens == nil {
		gens = []v1alpha1.ApplicationSetGenerator{}
	}
	b, err := json.Marshal(gens)
	return string(b), err
}
