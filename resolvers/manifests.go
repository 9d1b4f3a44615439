package resolvers

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// RepoServer lists the commits of application sources
// (reposerver.Service implements it, in process or over gRPC).
type RepoServer interface {
	ListCommits(ctx context.Context, repo reposerver.Repository, revision string, limit int) ([]reposerver.Commit, error)
	MatchTree(ctx context.Context, repo reposerver.Repository, revision string, req gittree.Request) (*gittree.Result, error)
}

// RepoCredentials finds the credentials of a repository URL in the
// repository Secrets, as the controller does for the applications of
// project (repocreds.Store implements it).
type RepoCredentials interface {
	Lookup(ctx context.Context, repoURL, project string) (reposerver.Repository, error)
}

// ManifestRenderer renders application sources with their projects'
// rules (*manifests.Renderer implements it; the controller renders with
// the same code, so the API refuses what the controller refuses).
type ManifestRenderer interface {
	// RenderApp renders every source of an application.
	RenderApp(ctx context.Context, req manifests.AppRequest) (*manifests.AppResponse, error)
	// Repository returns the repository of a source, with its
	// credentials, when the project permits it.
	Repository(ctx context.Context, req manifests.Request) (reposerver.Repository, error)
}

// maxRevisions caps Application.revisions(first).
const maxRevisions = 50

// applicationManifests renders every source of app, the one at
// sourcePosition at revision, and returns one YAML document per object.
// Like revisions, it needs no check of its own: an Application reaches a
// field resolver only when the caller may get it (queries filter, and
// mutations look the app up with appFor), which is what Argo CD asks of
// reading an app's manifests.
func (r *Resolver) applicationManifests(ctx context.Context, obj *model.Application, revision *string, sourcePosition *int32) ([]string, error) {
	app := obj.Application
	srcs, pos, err := appSources(app, sourcePosition)
	if err != nil {
		return nil, err
	}
	if r.Manifests == nil {
		return nil, Errorf(CodeInternal, "this server has no repository server to render with")
	}
	proj, err := r.appProject(ctx, app)
	if err != nil {
		return nil, err
	}
	revisions := make([]string, len(srcs))
	if revision != nil {
		revisions[pos] = *revision
	}
	res, err := r.Manifests.RenderApp(ctx, manifests.AppRequest{App: app, Project: proj, Sources: srcs, Revisions: revisions})
	var failed *manifests.SourceError
	if errors.As(err, &failed) {
		return nil, renderError(failed.Index, failed.Err)
	}
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, one := range res.Sources {
		if one == nil {
			continue // provides files to the other sources, renders nothing
		}
		for _, m := range one.Manifests {
			b, err := yaml.Marshal(m.Object)
			if err != nil {
				return nil, fmt.Errorf("print %s %s: %w", m.GetKind(), m.GetName(), err)
			}
			out = append(out, string(b))
		}
	}
	return out, nil
}

// applicationRevisions lists the first commits of the history of the
// source at sourcePosition at its target revision.
func (r *Resolver) applicationRevisions(ctx context.Context, obj *model.Application, first int32, sourcePosition *int32) ([]*model.Revision, error) {
	if first < 0 || first > maxRevisions {
		return nil, Errorf(CodeBadUserInput, "first must be between 0 and %d, got %d", maxRevisions, first)
	}
	app := obj.Application
	srcs, pos, err := appSources(app, sourcePosition)
	if err != nil {
		return nil, err
	}
	if r.Repo == nil || r.Manifests == nil {
		return nil, Errorf(CodeInternal, "this server has no repository server to read commits with")
	}
	proj, err := r.appProject(ctx, app)
	if err != nil {
		return nil, err
	}
	src := srcs[pos]
	repo, err := r.Manifests.Repository(ctx, manifests.Request{App: app, Project: proj, Source: src})
	if err != nil {
		return nil, renderError(pos, err)
	}
	if first == 0 || src.Chart != "" || repo.Type == reposerver.RepoTypeHelm {
		return []*model.Revision{}, nil
	}
	commits, err := r.Repo.ListCommits(ctx, repo, src.TargetRevision, int(first))
	if errors.Is(err, reposerver.ErrNotGit) {
		return []*model.Revision{}, nil
	}
	if err != nil {
		return nil, sourceError(pos, err)
	}
	out := make([]*model.Revision, len(commits))
	for i, c := range commits {
		tags := c.Tags
		if tags == nil {
			tags = []string{}
		}
		out[i] = &model.Revision{
			Sha: c.SHA, Author: &model.CommitAuthor{Name: c.Author.Name, Email: c.Author.Email},
			Date: metav1.NewTime(c.Date), Subject: c.Subject(), Message: c.Message, Tags: tags,
		}
	}
	return out, nil
}

// appSources returns the sources of app and the index sourcePosition
// (counted from 1, default 1) names among them.
func appSources(app *v1alpha1.Application, sourcePosition *int32) ([]v1alpha1.ApplicationSource, int, error) {
	srcs, _ := app.Spec.EffectiveSources()
	if len(srcs) == 0 {
		return nil, 0, Errorf(CodeBadUserInput, "application %s has no source", app.Name)
	}
	pos := 0
	if sourcePosition != nil {
		if *sourcePosition < 1 || int(*sourcePosition) > len(srcs) {
			return nil, 0, Errorf(CodeBadUserInput, "sourcePosition must be between 1 and %d, got %d", len(srcs), *sourcePosition)
		}
		pos = int(*sourcePosition) - 1
	}
	return srcs, pos, nil
}

// appProject returns app's project: the one in the app's namespace, else
// the first of that name the store holds. FORBIDDEN when there is none,
// since a missing project permits nothing.
func (r *Resolver) appProject(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	proj, err := r.findProject(ctx, app)
	if err == nil && proj == nil {
		err = Errorf(CodeForbidden, "application references project %s which does not exist", app.ProjectName())
	}
	return proj, err
}

// findProject is appProject with nil for a project that does not exist.
// It runs for every app outside graphcd's namespace that a list or an
// event admits, so when projects live in one namespace it is one cache
// Get.
func (r *Resolver) findProject(ctx context.Context, app *v1alpha1.Application) (*v1alpha1.AppProject, error) {
	if r.Projects == nil {
		return nil, nil
	}
	name := app.ProjectName()
	own := r.projectNamespace()
	if own != "" {
		// Projects live in graphcd's namespace only: one a tenant made
		// in theirs grants nothing. A store of that namespace (the
		// server's) answers with it; one of every namespace may answer
		// with a tenant's, and then the list below decides.
		p, err := r.Projects.Project(ctx, name)
		if err != nil || p == nil || p.Namespace == own {
			return p, err
		}
	}
	all, err := r.Projects.Projects(ctx)
	if err != nil {
		return nil, err
	}
	var found *v1alpha1.AppProject
	for _, p := range all {
		if p.Name != name {
			continue
		}
		if own != "" {
			if p.Namespace == own {
				return p, nil
			}
			continue
		}
		if found == nil || p.Namespace == app.Namespace {
			found = p
		}
	}
	return found, nil
}

// projectNamespace is where AppProjects live when the API serves
// applications of several namespaces, "" when it serves every namespace
// (each app with the projects of its own).
func (r *Resolver) projectNamespace() string {
	if r.AppNamespaces == nil {
		return ""
	}
	return r.AppNamespaces.Own()
}

// specAllowed refuses, when an application is written, a spec its
// project does not permit, with the controller's rule (project.AppAllowed)
// and Argo CD's words: the project must exist and permit the repository
// of every source and the destination, whose cluster is named as it is
// registered.
func (r *Resolver) specAllowed(ctx context.Context, app *v1alpha1.Application) error {
	proj, err := r.findProject(ctx, app)
	if err != nil {
		return err
	}
	if proj == nil {
		return Errorf(CodeBadUserInput, "application spec is invalid: application references project %s which does not exist", app.ProjectName())
	}
	if own := r.projectNamespace(); own != "" {
		if err := project.AppNamespaceAllowed(proj, app.Namespace, own); err != nil {
			return &Error{Code: CodeBadUserInput, Message: "application spec is invalid: " + err.Error(), Err: err}
		}
	}
	if err := project.AppAllowed(proj, &app.Spec, r.destinationCluster(ctx, app.Spec.Destination)); err != nil {
		return &Error{Code: CodeBadUserInput, Message: "application spec is invalid: " + err.Error(), Err: err}
	}
	return nil
}

// destinationCluster returns the server, name and project of the
// registered cluster dest points at, found as the controller finds it, or
// dest's own server and name when none matches (the controller reports
// such a destination as invalid).
func (r *Resolver) destinationCluster(ctx context.Context, dest v1alpha1.ApplicationDestination) project.Cluster {
	if r.Clusters == nil {
		return project.Cluster{Server: dest.Server, Name: dest.Name}
	}
	c, ok := r.Clusters.Destination(ctx, dest)
	if !ok {
		return project.Cluster{Server: dest.Server, Name: dest.Name}
	}
	return project.Cluster{Server: c.Server, Name: c.Name, Project: c.Project}
}

// renderError turns an error of manifests.Renderer about the source at
// index i into what clients see. The project's refusals are FORBIDDEN with
// the reason the controller reports in the app's conditions: a repository
// the project does not permit, and a commit none of its signatureKeys
// signed. What could not be read from the cluster stays internal; the
// rest came from the repository server (see sourceError).
func renderError(i int, err error) error {
	var denied *project.DeniedError
	var invalid *project.InvalidError
	var missing *manifests.MissingProjectError
	var lookup *manifests.LookupError
	switch {
	case errors.As(err, &denied) || errors.As(err, &invalid) || errors.As(err, &missing):
		return &Error{Code: CodeForbidden, Message: err.Error()}
	case manifests.SignatureRefused(err):
		return &Error{Code: CodeForbidden, Message: fmt.Sprintf("source %d: %s", i+1, repourl.Redact(err.Error())), Err: err}
	case errors.As(err, &lookup):
		return err
	}
	return sourceError(i, err)
}

// sourceError turns a repository server error about the source at index
// i into what clients see. A malformed or unknown revision is theirs to
// fix; other failures keep their message, which is what the application's
// ComparisonError condition already shows (the repository server never
// puts credentials in it), with the INTERNAL code.
func sourceError(i int, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	msg := fmt.Sprintf("source %d: %s", i+1, repourl.Redact(err.Error()))
	if errors.Is(err, git.ErrInvalidRevision) || errors.Is(err, git.ErrRevisionNotFound) {
		return &Error{Code: CodeBadUserInput, Message: msg, Err: err}
	}
	return &Error{Code: CodeInternal, Message: msg, Err: err}
}
