package resolvers

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/secretops"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/resourceversion"
	"github.com/graphcd/graphcd/reposerver"
)

// ProjectWriter changes AppProjects (appops.Service implements it).
type ProjectWriter interface {
	CreateProject(ctx context.Context, p *v1alpha1.AppProject, upsert bool) (*v1alpha1.AppProject, error)
	UpdateProject(ctx context.Context, key types.NamespacedName, change func(*v1alpha1.AppProject)) (*v1alpha1.AppProject, error)
	DeleteProject(ctx context.Context, key types.NamespacedName) error
	// AddProjectToken records a role's new token: appops.ErrTokenExists
	// when the role has one with its ID.
	AddProjectToken(ctx context.Context, key types.NamespacedName, role string, tok v1alpha1.JWTToken) error
	// RemoveProjectToken removes and returns the record of a role's token:
	// appops.ErrTokenNotFound when there is none.
	RemoveProjectToken(ctx context.Context, key types.NamespacedName, role, id string) (v1alpha1.JWTToken, error)
}

// SecretWriter writes repository and cluster Secrets (secretops.Service
// implements it).
type SecretWriter interface {
	PutRepository(ctx context.Context, r secretops.Repository, upsert bool) error
	DeleteRepository(ctx context.Context, url, project string, template bool) error
	// PutCluster and DeleteCluster call authorize with the project of
	// the cluster they found ("" for a global one) before they change it,
	// and return its error as it is.
	PutCluster(ctx context.Context, c secretops.Cluster, upsert bool, authorize func(currentProject string) error) error
	DeleteCluster(ctx context.Context, server string, authorize func(currentProject string) error) error
}

// RepoTester reaches a repository with its credentials
// (reposerver.Service implements it).
type RepoTester interface {
	TestRepository(ctx context.Context, repo reposerver.Repository) error
}

func (r *Resolver) projectWriter() (ProjectWriter, error) {
	if r.ProjectWriter == nil {
		return nil, Errorf(CodeForbidden, "this server is read-only")
	}
	return r.ProjectWriter, nil
}

func (r *Resolver) secretWriter() (SecretWriter, error) {
	if r.Secrets == nil {
		return nil, Errorf(CodeForbidden, "this server is read-only")
	}
	return r.Secrets, nil
}

// createProject decodes, authorizes and writes a project manifest.
func (r *Resolver) createProject(ctx context.Context, in model.CreateProjectInput) (*model.Project, error) {
	p, err := appops.DecodeProject(in.Manifest, r.Namespace)
	if err != nil {
		return nil, invalidInput(err)
	}
	if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionCreate, projectTarget(p.Name)); err != nil {
		return nil, err
	}
	if in.Upsert {
		if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionUpdate, projectTarget(p.Name)); err != nil {
			return nil, err
		}
	}
	w, err := r.projectWriter()
	if err != nil {
		return nil, err
	}
	created, err := w.CreateProject(ctx, p, in.Upsert)
	if err != nil {
		return nil, objectError("project", p.Name, err)
	}
	r.awaitProject(ctx, created)
	return &model.Project{AppProject: created}, nil
}

// awaitProject waits, for at most indexWait, until the project store the
// API reads has written (or a later version): an application created
// right after its project, or a query, then finds it, as awaitIndexed
// does for applications. The store follows the API server through a
// watch, usually a few milliseconds behind.
func (r *Resolver) awaitProject(ctx context.Context, written *v1alpha1.AppProject) {
	if r.Projects == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		all, err := r.Projects.Projects(ctx)
		if err != nil {
			return
		}
		for _, p := range all {
			if p.Name == written.Name && p.Namespace == written.Namespace && resourceversion.AtLeast(p.ResourceVersion, written.ResourceVersion) {
				return
			}
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

func (r *Resolver) updateProjectSpec(ctx context.Context, in model.UpdateProjectSpecInput) (*model.Project, error) {
	spec, err := appops.DecodeProjectSpec(in.Spec)
	if err != nil {
		return nil, invalidInput(err)
	}
	if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionUpdate, projectTarget(in.Name)); err != nil {
		return nil, err
	}
	w, err := r.projectWriter()
	if err != nil {
		return nil, err
	}
	p, err := w.UpdateProject(ctx, types.NamespacedName{Namespace: r.Namespace, Name: in.Name}, func(cur *v1alpha1.AppProject) {
		cur.Spec = spec
	})
	if err != nil {
		return nil, objectError("project", in.Name, err)
	}
	r.awaitProject(ctx, p)
	return &model.Project{AppProject: p}, nil
}

func (r *Resolver) deleteProject(ctx context.Context, name string) (string, error) {
	if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionDelete, projectTarget(name)); err != nil {
		return "", err
	}
	w, err := r.projectWriter()
	if err != nil {
		return "", err
	}
	key := types.NamespacedName{Namespace: r.Namespace, Name: name}
	if err := w.DeleteProject(ctx, key); err != nil {
		return "", objectError("project", name, err)
	}
	return model.NodeID(model.KindProject, key), nil
}

// createRepository declares a repository, authorized as Argo CD does on
// its RBAC object: the URL, or "<project>/<url>" for a project's own (so a
// project role may declare its project's repositories).
func (r *Resolver) createRepository(ctx context.Context, in model.RepositoryInput) (*model.Repository, error) {
	repo := secretops.Repository{
		URL: in.URL, Name: deref(in.Name), Project: deref(in.Project), Type: deref(in.Type),
		Username: deref(in.Username), Password: deref(in.Password), SSHPrivateKey: deref(in.SSHPrivateKey),
		TLSClientCertData: deref(in.TLSClientCertData), TLSClientCertKey: deref(in.TLSClientCertKey),
		Insecure: in.Insecure, EnableOCI: in.EnableOci, Template: in.Template,
	}
	if err := repo.Validate(); err != nil {
		return nil, Errorf(CodeBadUserInput, "repository: %v", err)
	}
	object := scopedTarget(repo.Project, repo.URL)
	if err := r.authorize(ctx, rbac.ResourceRepositories, rbac.ActionCreate, object); err != nil {
		return nil, err
	}
	if in.Upsert { // replacing one needs the update right too, as in Argo CD
		if err := r.authorize(ctx, rbac.ResourceRepositories, rbac.ActionUpdate, object); err != nil {
			return nil, err
		}
	}
	w, err := r.secretWriter()
	if err != nil {
		return nil, err
	}
	tested := !in.Template && !in.SkipTest && r.RepoTester != nil
	if tested {
		creds := reposerver.Credentials{
			Username: repo.Username, Password: repo.Password, SSHPrivateKey: []byte(repo.SSHPrivateKey),
			TLSClientCert: []byte(repo.TLSClientCertData), TLSClientKey: []byte(repo.TLSClientCertKey), Insecure: repo.Insecure,
		}
		test := reposerver.Repository{URL: repo.URL, Type: reposerver.RepoType(repo.Type), EnableOCI: repo.EnableOCI, Credentials: &creds}
		if err := r.RepoTester.TestRepository(ctx, test); err != nil {
			return nil, &Error{Code: CodeBadUserInput, Message: "repository test failed: " + err.Error(), Err: err}
		}
	}
	if err := w.PutRepository(ctx, repo, in.Upsert); err != nil {
		return nil, objectError("repository", in.URL+inProject(repo.Project), err)
	}
	r.repositoriesChanged()
	if tested { // the credentials just stored were the ones tested
		r.conns.record(repo.URL, repo.Project, &model.ConnectionState{Status: model.ConnectionStatusSuccessful, AttemptedAt: metav1.Now()})
	} else {
		r.conns.record(repo.URL, repo.Project, nil)
	}
	typ := repo.Type
	if typ == "" {
		typ = string(reposerver.RepoTypeGit)
	}
	return &model.Repository{
		Name: repo.Name, URL: repo.URL, Project: repo.Project, Type: typ, Template: repo.Template,
		HasCredentials: repo.Username != "" || repo.SSHPrivateKey != "" || repo.TLSClientCertData != "",
	}, nil
}

// deleteRepository removes the repository (or template) url of project
// ("": the global one), authorized on its RBAC object.
func (r *Resolver) deleteRepository(ctx context.Context, url string, template bool, project string) (string, error) {
	if err := r.authorize(ctx, rbac.ResourceRepositories, rbac.ActionDelete, scopedTarget(project, url)); err != nil {
		return "", err
	}
	w, err := r.secretWriter()
	if err != nil {
		return "", err
	}
	if err := w.DeleteRepository(ctx, url, project, template); err != nil {
		return "", objectError("repository", url+inProject(project), err)
	}
	r.repositoriesChanged()
	r.conns.record(url, project, nil)
	return model.Repository{URL: url, Template: template, Project: project}.ID(), nil
}

// addCluster registers a cluster, authorized on its RBAC object: the
// server, or "<project>/<server>" for a project's own. Replacing a cluster
// (upsert) needs update on the object it has now too, so a project role
// can neither take another project's cluster nor make a global one its
// own; the built-in in-cluster cluster is such a global one. A cluster
// the caller may not get is refused as the new object would be, without
// saying whose it is.
func (r *Resolver) addCluster(ctx context.Context, in model.ClusterInput) (*model.Cluster, error) {
	c := secretops.Cluster{
		Name: in.Name, Server: in.Server, BearerToken: deref(in.BearerToken),
		CAData: deref(in.CaData), CertData: deref(in.CertData), KeyData: deref(in.KeyData),
		Insecure: in.Insecure, ServerName: deref(in.ServerName), Namespaces: in.Namespaces,
		ClusterResources: in.ClusterResources, Project: deref(in.Project), Labels: map[string]string{},
	}
	for _, l := range in.Labels {
		c.Labels[l.Key] = l.Value
	}
	if err := c.Validate(); err != nil {
		return nil, Errorf(CodeBadUserInput, "cluster: %v", err)
	}
	object := scopedTarget(c.Project, c.Server)
	action := rbac.ActionCreate
	if err := r.authorize(ctx, rbac.ResourceClusters, action, object); err != nil {
		return nil, err
	}
	w, err := r.secretWriter()
	if err != nil {
		return nil, err
	}
	if in.Upsert {
		action = rbac.ActionUpdate
		if err := r.authorize(ctx, rbac.ResourceClusters, action, object); err != nil {
			return nil, err
		}
	}
	err = w.PutCluster(ctx, c, in.Upsert, func(current string) error {
		currentObject := scopedTarget(current, c.Server)
		if !r.canSee(ctx, rbac.ResourceClusters, r.policyObject(rbac.ResourceClusters, currentObject)) {
			audit.Authorized(ctx, audit.Object{Kind: rbac.ResourceClusters, Project: current, Name: c.Server}, false)
			return denied(rbac.ResourceClusters, action, r.policyObject(rbac.ResourceClusters, object))
		}
		if in.Upsert && current != c.Project {
			return r.authorize(ctx, rbac.ResourceClusters, rbac.ActionUpdate, currentObject)
		}
		return nil
	})
	if err != nil {
		return nil, objectError("cluster", in.Server, err)
	}
	return &model.Cluster{
		Name: c.Name, Server: c.Server, Namespaces: c.Namespaces, ClusterResources: c.ClusterResources,
		Project: c.Project, Labels: model.KeyValues(c.Labels),
	}, nil
}

// removeCluster unregisters the cluster at server, authorized on the RBAC
// object it has. A cluster the caller may not see is not found for them.
func (r *Resolver) removeCluster(ctx context.Context, server string) (string, error) {
	w, err := r.secretWriter()
	if err != nil {
		return "", err
	}
	err = w.DeleteCluster(ctx, server, func(project string) error {
		object := scopedTarget(project, server)
		if !r.canSee(ctx, rbac.ResourceClusters, r.policyObject(rbac.ResourceClusters, object)) {
			audit.Authorized(ctx, audit.Object{Kind: rbac.ResourceClusters, Project: project, Name: server}, false)
			return Errorf(CodeNotFound, "cluster %s not found", truncate(server, 253))
		}
		return r.authorize(ctx, rbac.ResourceClusters, rbac.ActionDelete, object)
	})
	if err != nil {
		return "", objectError("cluster", server, err)
	}
	return model.Cluster{Server: server}.ID(), nil
}

// canSee reports whether the caller may get object of resource; without a
// session every object counts as seen, so that the refusal that follows
// asks to log in.
func (r *Resolver) canSee(ctx context.Context, resource, object string) bool {
	return r.Authz == nil || !r.Authz.Authenticated(ctx) || r.can(ctx, resource, rbac.ActionGet, object)
}

// objectError maps the error of a write to a project, repository or
// cluster to a coded error.
func objectError(what, name string, err error) error {
	switch {
	case errors.Is(err, appops.ErrProjectInUse):
		return Errorf(CodeConflict, "%s %s: %v", what, name, err)
	case errors.Is(err, secretops.ErrExists), apierrors.IsAlreadyExists(err):
		return Errorf(CodeConflict, "%s %s already exists (set upsert to replace it)", what, name)
	case errors.Is(err, secretops.ErrNameTaken):
		return Errorf(CodeConflict, "%s %s: %v", what, name, err)
	case errors.Is(err, secretops.ErrNotFound), apierrors.IsNotFound(err):
		return Errorf(CodeNotFound, "%s %s not found", what, name)
	case errors.Is(err, secretops.ErrInvalid):
		return Errorf(CodeBadUserInput, "%s %s: %v", what, name, err)
	case apierrors.IsConflict(err):
		return Errorf(CodeConflict, "%s %s changed while being written; try again", what, name)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &Error{Code: CodeBadUserInput, Message: what + " " + name + ": " + statusMessage(err), Err: err}
	}
	return err
}
