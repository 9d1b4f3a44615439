package resolvers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
)

// ProjectStore reads AppProjects (catalog.Catalog implements it). The
// objects are shared: never modify them.
type ProjectStore interface {
	// Projects returns every project, ordered by name.
	Projects(ctx context.Context) ([]*v1alpha1.AppProject, error)
	// Project returns the project name, or nil.
	Project(ctx context.Context, name string) (*v1alpha1.AppProject, error)
}

// ClusterLister lists the registered clusters without credentials.
type ClusterLister interface {
	Clusters(ctx context.Context) ([]model.Cluster, error)
	// Destination returns the cluster an application destination points
	// at, by the rule the controller resolves it with; false when none
	// does (or the destination is invalid).
	Destination(ctx context.Context, dest v1alpha1.ApplicationDestination) (model.Cluster, bool)
}

// RepositoryLister lists the configured repositories without credentials.
type RepositoryLister interface {
	Repositories(ctx context.Context) ([]model.Repository, error)
}

// maxListPage is the largest page of projects, clusters or repositories.
const maxListPage = 500

// page cuts a page out of all, sorted by key, for a connection field.
func page[T any](all []T, key func(T) string, first int32, after *string) (*model.Connection[T], error) {
	if first < 0 || first > maxListPage {
		return nil, Errorf(CodeBadUserInput, "first must be between 0 and %d, got %d", maxListPage, first)
	}
	slices.SortFunc(all, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	var cursor string
	if after != nil {
		cursor = *after
	}
	c, err := model.Page(all, key, int(first), cursor)
	if errors.Is(err, model.ErrBadCursor) {
		return nil, Errorf(CodeBadUserInput, "invalid cursor")
	}
	return c, err
}

// projects returns every project the caller may see, wrapped.
func (r *Resolver) projects(ctx context.Context) ([]model.Project, error) {
	if r.Projects == nil {
		return nil, nil
	}
	all, err := r.Projects.Projects(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]model.Project, 0, len(all))
	for _, p := range all {
		if r.can(ctx, rbac.ResourceProjects, rbac.ActionGet, p.Name) {
			out = append(out, model.Project{AppProject: p})
		}
	}
	return out, nil
}

// project returns the project name, or nil.
func (r *Resolver) project(ctx context.Context, name string) (*model.Project, error) {
	if r.Projects == nil {
		return nil, nil
	}
	if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionGet, projectTarget(name)); err != nil {
		return nil, err
	}
	p, err := r.Projects.Project(ctx, name)
	if err != nil || p == nil {
		return nil, err
	}
	return &model.Project{AppProject: p}, nil
}

func (r *Resolver) clusters(ctx context.Context) ([]model.Cluster, error) {
	if r.Clusters == nil {
		return nil, nil
	}
	all, err := r.Clusters.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c model.Cluster) bool {
		return !r.can(ctx, rbac.ResourceClusters, rbac.ActionGet, rbac.ScopedObject(c.Project, c.Server))
	}), nil
}

func (r *Resolver) repositories(ctx context.Context) ([]model.Repository, error) {
	if r.Repositories == nil {
		return nil, nil
	}
	all, err := r.Repositories.Repositories(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(repo model.Repository) bool {
		return !r.can(ctx, rbac.ResourceRepositories, rbac.ActionGet, rbac.ScopedObject(repo.Project, repo.URL))
	}), nil
}

func projectKey(p model.Project) string { return p.Name }
func clusterKey(c model.Cluster) string { return c.Server }
func repositoryKey(r model.Repository) string {
	return r.URL + "\x00" + r.Type + boolKey(r.Template) + "\x00" + r.Project
}

func boolKey(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// projectYAML prints p as kubectl would, without managedFields.
func projectYAML(p *v1alpha1.AppProject) (string, error) {
	out := p.DeepCopy()
	out.APIVersion = v1alpha1.GroupVersion.String()
	out.Kind = "AppProject"
	out.ManagedFields = nil
	b, err := yaml.Marshal(out)
	return string(b), err
}

// unixTime converts Unix seconds (JWT claims) to a Time.
func unixTime(sec int64) metav1.Time { return metav1.NewTime(time.Unix(sec, 0)) }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// projectApplications is a page of the applications of project.
func (r *Resolver) projectApplications(ctx context.Context, project string, first int32, after *string) (*model.ApplicationConnection, error) {
	p, err := r.apps().Page(appindex.Query{
		First: int(first), After: deref(after),
		Filter: appindex.Filter{Projects: []string{project}, Allow: r.appFilter(ctx)},
	})
	if err != nil {
		return nil, pageError(err)
	}
	return connection(p), nil
}
