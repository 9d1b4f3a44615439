package resolvers

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/graph/model"
)

// node fetches the object of kind at key for Query.node; nil when it does
// not exist (any more). id is the ID as given, for the error message.
func (r *Resolver) node(ctx context.Context, kind string, key types.NamespacedName, id string) (model.Node, error) {
	switch kind {
	case model.KindApplication:
		if app := r.application(ctx, key); app != nil {
			return app, nil
		}
		return nil, nil
	case model.KindApplicationSet:
		set, err := r.applicationSet(ctx, key)
		if err != nil || set == nil {
			return nil, err
		}
		return set, nil
	case model.KindProject:
		p, err := r.project(ctx, key.Name)
		if err != nil || p == nil {
			return nil, err
		}
		return p, nil
	case model.KindCluster:
		all, err := r.clusters(ctx)
		for _, c := range all {
			if c.ID() == id {
				return c, nil
			}
		}
		return nil, err
	case model.KindRepository:
		all, err := r.repositories(ctx)
		for _, repo := range all {
			if repo.ID() == id {
				return repo, nil
			}
		}
		return nil, err
	}
	return nil, Errorf(CodeBadUserInput, "invalid ID %q", truncate(id, 64))
}
