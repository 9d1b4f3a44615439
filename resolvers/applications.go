package resolvers

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/graph/model"
)

// emptyStore is the ApplicationStore of an API without applications.
type emptyStore struct{}

func (emptyStore) Get(types.NamespacedName) *v1alpha1.Application { return nil }

func (emptyStore) Page(q appindex.Query) (appindex.Page, error) { return appindex.New().Page(q) }

func (emptyStore) Changes(context.Context, types.NamespacedName) <-chan struct{} { return nil }

func (r *Resolver) apps() ApplicationStore {
	if r.Apps == nil {
		return emptyStore{}
	}
	return r.Apps
}

// appKey returns the key of the app name in namespace, or in the server's
// namespace when namespace is nil or empty.
func (r *Resolver) appKey(name string, namespace *string) types.NamespacedName {
	key := types.NamespacedName{Namespace: r.Namespace, Name: name}
	if namespace != nil && *namespace != "" {
		key.Namespace = *namespace
	}
	return key
}

// application returns the app with key, or nil when there is none or the
// caller may not see it.
func (r *Resolver) application(ctx context.Context, key types.NamespacedName) *model.Application {
	app := r.visibleApp(ctx, key)
	if app == nil {
		return nil
	}
	return &model.Application{Application: app}
}

// appFilter is the index filter of the apps the caller may see
// (canSeeApp), nil when the caller may see everything (auth is off, every
// app is served).
func (r *Resolver) appFilter(ctx context.Context) func(*v1alpha1.Application) bool {
	if r.Authz == nil && r.admitsAll() {
		return nil
	}
	return func(app *v1alpha1.Application) bool { return r.canSeeApp(ctx, app) }
}

// applicationQuery turns the arguments of Query.applications into an index
// query.
func applicationQuery(first int32, after *string, filter *model.ApplicationFilter, orderBy *model.ApplicationOrder) (appindex.Query, error) {
	q := appindex.Query{First: int(first)}
	if after != nil {
		q.After = *after
	}
	if orderBy != nil {
		q.Order = appindex.Order{Field: appindex.OrderField(orderBy.Field), Desc: orderBy.Direction == model.OrderDirectionDesc}
	}
	if filter == nil {
		return q, nil
	}
	f := filter
	q.Filter = appindex.Filter{
		Namespaces:            f.Namespaces,
		Projects:              f.Projects,
		Sync:                  f.SyncStatus,
		Health:                f.Health,
		Clusters:              f.Clusters,
		DestinationNamespaces: f.DestinationNamespaces,
		Repos:                 f.Repos,
		TargetRevisions:       f.TargetRevisions,
		AutoSync:              f.AutoSync,
	}
	if f.Search != nil {
		q.Filter.Search = *f.Search
	}
	if f.LabelSelector != nil && *f.LabelSelector != "" {
		sel, err := labels.Parse(*f.LabelSelector)
		if err != nil {
			return q, Errorf(CodeBadUserInput, "filter.labelSelector: %v", err)
		}
		q.Filter.Labels = sel
	}
	return q, nil
}

// pageError marks the index's complaints about a query as the client's.
func pageError(err error) error {
	if errors.Is(err, appindex.ErrBadQuery) {
		return Errorf(CodeBadUserInput, "%v", err)
	}
	return err
}

// connection shows the index's page p as the graph's connection.
func connection(p appindex.Page) *model.ApplicationConnection {
	return &model.ApplicationConnection{Page: model.AppPage{
		Items: p.Items, Cursor: p.Cursor, EndCursor: p.EndCursor,
		HasNextPage: p.HasNextPage, HasPreviousPage: p.HasPreviousPage, TotalCount: p.TotalCount,
	}}
}

// applicationYAML prints app as kubectl would, without managedFields.
func applicationYAML(app *v1alpha1.Application) (string, error) {
	out := app.DeepCopy()
	out.APIVersion = v1alpha1.GroupVersion.String()
	out.Kind = "Application"
	out.ManagedFields = nil
	b, err := yaml.Marshal(out)
	return string(b), err
}

// keyValues returns m as a sorted key/value list.
func keyValues(m map[string]string) []*model.KeyValue {
	kvs := model.KeyValues(m)
	out := make([]*model.KeyValue, len(kvs))
	for i := range kvs {
		out[i] = &kvs[i]
	}
	return out
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
