package resolvers

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/secretops"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
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
	PutCluster(ctx context.Context, c secretops.Cluster, upsert bool) error
	DeleteCluster(ctx context.Context, server string) error
	// ClusterProject returns the project of the cluster at server ("" for
	// a global one), secretops.ErrNotFound when none is declared.
	ClusterProject(ctx context.Context, server string) (string, error)
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
	return &model.Project{AppProject: created}, nil
}

func (r *Resolver) updateProjectSpec(ctx context.Context, in model.UpdateProjectSpecInput) (*model.Project, error) {
	var spec v1alpha1.AppProjectSpec
	if err := yaml.UnmarshalStrict([]byte(in.Spec), &spec); err != nil {
		return nil, Errorf(CodeBadUserInput, "spec: %v", err)
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
// own.
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
	if err := r.authorize(ctx, rbac.ResourceClusters, rbac.ActionCreate, object); err != nil {
		return nil, err
	}
	w, err := r.secretWriter()
	if err != nil {
		return nil, err
	}
	if in.Upsert {
		if err := r.authorize(ctx, rbac.ResourceClusters, rbac.ActionUpdate, object); err != nil {
			return nil, err
		}
		current, err := w.ClusterProject(ctx, c.Server)
		switch {
		case errors.Is(err, secretops.ErrNotFound):
		case err != nil:
			return nil, err
		case current != c.Project:
			if err := r.authorize(ctx, rbac.ResourceClusters, rbac.ActionUpdate, scopedTarget(current, c.Server)); err != nil {
				return nil, err
			}
		}
	}
	if err := w.PutCluster(ctx, c, in.Upsert); err != nil {
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
	project, err := w.ClusterProject(ctx, server)
	if err != nil && !errors.Is(err, secretops.ErrNotFound) {
		return "", err
	}
	object := scopedTarget(project, server)
	if err == nil && r.Authz != nil && r.Authz.Authenticated(ctx) && !r.can(ctx, rbac.ResourceClusters, rbac.ActionGet, r.policyObject(rbac.ResourceClusters, object)) {
		return "", Errorf(CodeNotFound, "cluster %s not found", truncate(server, 253))
	}
	if err := r.authorize(ctx, rbac.ResourceClusters, rbac.ActionDelete, object); err != nil {
		return "", err
	}
	if err := w.DeleteCluster(ctx, server); err != nil {
		return "", objectError("cluster", server, err)
	}
	return model.Cluster{Server: server}.ID(), nil
}

// objectError maps the error of a write to a project, repository or
// cluster to a coded error.
func objectError(what, name string, err error) error {
	switch {
	case errors.Is(err, appops.ErrProjectInUse):
		return Errorf(CodeConflict, "%s %s: %v", what, name, err)
	case errors.Is(err, secretops.ErrExists), apierrors.IsAlreadyExists(err):
		return Errorf(CodeConflict, "%s %s already exists (set upsert to replace it)", what, name)
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
