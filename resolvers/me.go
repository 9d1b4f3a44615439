package resolvers

import (
	"context"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
)

// SettingsReader reads the public settings (catalog.Settings implements
// it).
type SettingsReader interface {
	PublicSettings(ctx context.Context) (model.Settings, error)
}

// me describes the caller of ctx.
func me(ctx context.Context) *model.Me {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return &model.Me{Username: "anonymous", Groups: []string{}}
	}
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	m := &model.Me{LoggedIn: true, Username: p.Subject, Groups: groups}
	if p.Email != "" {
		m.Email = &p.Email
	}
	return m
}

// settings returns the public settings; defaults without a reader.
func (r *Resolver) settings(ctx context.Context) (*model.Settings, error) {
	if r.Settings == nil {
		return &model.Settings{SSOProviders: []string{}}, nil
	}
	s, err := r.Settings.PublicSettings(ctx)
	return &s, err
}

// permissions lists the RBAC rules that apply to the caller; without an
// Authorizer (auth disabled) everyone may do everything, which one rule
// says.
func (r *Resolver) permissions(ctx context.Context) []*model.Permission {
	if r.Authz == nil {
		return []*model.Permission{{Subject: "*", Resource: "*", Action: "*", Object: "*", Effect: string(rbac.Allow)}}
	}
	rules := r.Authz.Permissions(ctx)
	out := make([]*model.Permission, len(rules))
	for i, rule := range rules {
		out[i] = &model.Permission{
			Subject: rule.Subject, Resource: rule.Resource, Action: rule.Action, Object: rule.Object, Effect: string(rule.Effect),
		}
	}
	return out
}
