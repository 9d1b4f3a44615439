package resolvers

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/deeplinks"
	"github.com/graphcd/graphcd/graph/model"
)

// LinkSource gives graphcd-cm's application.links, project.links and
// resource.links (catalog.Settings is one); err says why they are empty
// when invalid.
type LinkSource interface {
	DeepLinks() (app, project, resource []deeplinks.Rule, err error)
}

// appLinks are the links application.links gives app: built from the
// app, its project and its destination cluster's name and server (never
// the cluster's credentials). A rule that fails gives no link.
func (r *Resolver) appLinks(ctx context.Context, app *v1alpha1.Application) ([]*model.DeepLink, error) {
	if r.Links == nil {
		return []*model.DeepLink{}, nil
	}
	rules, _, _, _ := r.Links.DeepLinks()
	return r.evaluateLinks(ctx, rules, app, nil), nil
}

// resourceLinks are the links resource.links gives a live object of an
// application.
func (r *Resolver) resourceLinks(ctx context.Context, res *model.LiveResource) ([]*model.DeepLink, error) {
	if r.Links == nil || res.Object == nil || res.App == nil {
		return []*model.DeepLink{}, nil
	}
	_, _, rules, _ := r.Links.DeepLinks()
	return r.evaluateLinks(ctx, rules, res.App, res.Object), nil
}

// evaluateLinks builds the links of rules from app, its project, its
// cluster's name and server (never the cluster's credentials) and, for a
// resource's links, the object. A rule that fails gives no link.
func (r *Resolver) evaluateLinks(ctx context.Context, rules []deeplinks.Rule, app *v1alpha1.Application, resource map[string]any) []*model.DeepLink {
	if len(rules) == 0 {
		return []*model.DeepLink{}
	}
	data := map[string]any{"app": toMap(app), "project": map[string]any{}, "cluster": map[string]any{}}
	if resource != nil {
		data["resource"] = resource
	}
	if r.Projects != nil {
		if p, err := r.Projects.Project(ctx, app.Spec.Project); err == nil && p != nil {
			data["project"] = toMap(p)
		}
	}
	if r.Clusters != nil {
		if c, ok := r.Clusters.Destination(ctx, app.Spec.Destination); ok {
			data["cluster"] = map[string]any{"name": c.Name, "server": c.Server}
		}
	}
	links, _ := deeplinks.Evaluate(rules, data)
	return modelLinks(links)
}

// projectLinks are the links project.links gives p.
func (r *Resolver) projectLinks(p *v1alpha1.AppProject) ([]*model.DeepLink, error) {
	if r.Links == nil {
		return []*model.DeepLink{}, nil
	}
	_, rules, _, _ := r.Links.DeepLinks()
	links, _ := deeplinks.Evaluate(rules, map[string]any{"project": toMap(p)})
	return modelLinks(links), nil
}

// toMap is obj as the JSON a user reads (metadata, spec, status).
func toMap(obj any) map[string]any {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return map[string]any{}
	}
	return m
}

func modelLinks(links []deeplinks.Link) []*model.DeepLink {
	out := make([]*model.DeepLink, len(links))
	for i, l := range links {
		out[i] = &model.DeepLink{Title: l.Title, URL: l.URL, Description: l.Description, IconClass: l.IconClass}
	}
	return out
}
