package resolvers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// dryRunApplicationSet generates the Applications of a set manifest as
// the controller would, and checks each against its project as the
// controller does before writing it; nothing is written. The caller needs
// the rights a create needs, the clusters generator sees the clusters
// the caller may get, and git generators read through the repository
// server as the controller's do, and the clusterDecisionResource, plugin,
// SCM provider and pull request generators read through AppSetSources as
// the controller's do (without them, they fail).
func (r *Resolver) dryRunApplicationSet(ctx context.Context, in model.DryRunApplicationSetInput, first int32) (*model.ApplicationSetPreview, error) {
	if first < 0 || first > appset.MaxParams {
		return nil, Errorf(CodeBadUserInput, "first must be between 0 and %d, got %d", appset.MaxParams, first)
	}
	set, err := r.decodeApplicationSet(in.Manifest)
	if err != nil {
		return nil, err
	}
	if err := r.authorizeSetSpec(ctx, set, rbac.ActionCreate); err != nil {
		return nil, err
	}
	sources, err := r.setSources(ctx, set)
	if err != nil {
		return nil, err
	}
	results, err := appset.Generate(set, sources)
	if err != nil {
		return nil, Errorf(CodeBadUserInput, "applicationset %s generates nothing: %v", set.Name, err)
	}
	out := &model.ApplicationSetPreview{TotalCount: int32(len(results))} //nolint:gosec // at most appset.MaxParams
	for i, res := range results {
		el := &model.ApplicationSetPreviewElement{Generator: int32(res.Generator), Params: paramsText(res.Params)} //nolint:gosec // a generator index
		failure := res.Err
		if res.App != nil {
			el.Application = &model.GeneratedApplication{Application: res.App}
			if failure, err = r.admitGenerated(ctx, set, res.App); err != nil {
				return nil, err
			}
		}
		if failure != nil {
			out.FailedCount++
			msg := failure.Error()
			el.Error = &msg
		}
		if i < int(first) {
			out.Elements = append(out.Elements, el)
		}
	}
	return out, nil
}

// admitGenerated says why the controller would refuse to write app, a
// generated Application of set: a namespace other than the set's, or a
// project that does not exist or does not permit app's namespace,
// sources or destination (the rule specAllowed applies to every
// Application the API writes). err is a failure to check at all.
func (r *Resolver) admitGenerated(ctx context.Context, set *v1alpha1.ApplicationSet, app *v1alpha1.Application) (refused, err error) {
	// As the controller's: a set creates Applications in its own namespace.
	if app.Namespace != set.Namespace {
		return fmt.Errorf("the template's namespace %q is not the ApplicationSet's: a set creates Applications in its own namespace (%s)", app.Namespace, set.Namespace), nil
	}
	err = r.specAllowed(ctx, app)
	if safe, ok := errors.AsType[*Error](err); ok {
		if safe.Err != nil {
			return safe.Err, nil // the project's words, as the controller reports them
		}
		return errors.New(safe.Message), nil
	}
	return nil, err
}

// setSources are what the generators of a dry run read outside the set:
// the registered clusters the caller may get, and the repositories of
// its git generators, read as the controller reads them (credentials
// only where every project of the set permits the repository).
func (r *Resolver) setSources(ctx context.Context, set *v1alpha1.ApplicationSet) (appset.Sources, error) {
	out := previewSources{ctx: ctx, r: r, set: set}
	if g := r.AppSetSources; g != nil {
		verified, insecure := appset.NewHTTPClients()
		out.KubeSources = appset.KubeSources{Ctx: ctx, Client: g.Client, Reader: g.Client, Namespace: r.Namespace, Set: set,
			HTTP: verified, Insecure: insecure, Forges: g.Forges}
	}
	if r.Clusters == nil {
		return out, nil
	}
	visible, err := r.clusters(ctx)
	if err != nil {
		return nil, err
	}
	out.clusters = make([]appset.Cluster, len(visible))
	for i, c := range visible {
		out.clusters[i] = appset.Cluster{Name: c.Name, Server: c.Server, Project: c.Project, Labels: kvMap(c.Labels), Annotations: kvMap(c.Annotations)}
	}
	return out, nil
}

// previewSources give a dry run's generators the clusters and the
// repositories, and what KubeSources read.
type previewSources struct {
	appset.KubeSources
	ctx      context.Context
	r        *Resolver
	set      *v1alpha1.ApplicationSet
	clusters []appset.Cluster
}

func (s previewSources) Clusters() ([]appset.Cluster, error) { return s.clusters, nil }

// GitMatch implements appset.GitSources through the repository server.
func (s previewSources) GitMatch(repoURL, revision string, req gittree.Request) (*gittree.Result, error) {
	if s.r.Repo == nil {
		return nil, errors.New("no repository server to read repositories")
	}
	repo := reposerver.Repository{URL: repoURL}
	if s.set.Namespace == s.r.Namespace && s.r.RepoCreds != nil && s.r.Projects != nil {
		project, ok := appset.CredentialsProject(s.set, repoURL, func(name string) (*v1alpha1.AppProject, error) {
			return s.r.Projects.Project(s.ctx, name)
		})
		if ok {
			var err error
			if repo, err = s.r.RepoCreds.Lookup(s.ctx, repoURL, project); err != nil {
				return nil, err
			}
		}
	}
	return s.r.Repo.MatchTree(s.ctx, repo, revision, req)
}

func kvMap(kvs []model.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = kv.Value
	}
	return out
}

// paramsText is an element's parameters as compact JSON.
func paramsText(params map[string]any) string {
	b, err := json.Marshal(params)
	if err != nil {
		return ""
	}
	return string(b)
}
