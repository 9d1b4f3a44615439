package resolvers

import (
	"context"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/gqlmodel"
)

// SettingsReader reads the public settings (catalog.Settings implements
// it).
type SettingsReader interface {
	PublicSettings(ctx context.Context) (gqlmodel.Settings, error)
}

// me describes the caller of ctx.
func me(ctx context.Context) *gqlmodel.Me {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return &gqlmodel.Me{Username: "anonymous", Groups: []string{}}
	}
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	return &gqlmodel.Me{LoggedIn: true, Username: p.Subject, Groups: groups}
}

// settings returns the public settings; defaults without a reader.
func (r *Resolver) settings(ctx context.Context) (*gqlmodel.Settings, error) {
	if r.Settings == nil {
		return &gqlmodel.Settings{SSOProviders: []string{}}, nil
	}
	s, err := r.Settings.PublicSettings(ctx)
	return &s, err
}
