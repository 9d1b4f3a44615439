package appops

import (
	"context"
	"errors"
	"slices"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Errors of the project token records.
var (
	// ErrTokenExists: the role already has a token with that ID.
	ErrTokenExists = errors.New("the role already has a token with that id")
	// ErrTokenNotFound: the role has no token with that ID.
	ErrTokenNotFound = errors.New("the role has no token with that id")
)

// AddProjectToken records tok on role of the project at key, as Argo CD
// does, so that the token can be listed and revoked: ErrTokenExists when
// the role has one with its ID.
func (s Service) AddProjectToken(ctx context.Context, key types.NamespacedName, role string, tok v1alpha1.JWTToken) error {
	var clash bool
	_, err := s.UpdateProject(ctx, key, func(p *v1alpha1.AppProject) { clash = !addToken(p, role, tok) })
	if err == nil && clash {
		return ErrTokenExists
	}
	return err
}

// RemoveProjectToken removes the record of the token id from role of the
// project at key, in its spec or in the status where Argo CD also keeps
// them, and returns it (its end bounds the revocation): ErrTokenNotFound
// when there is none.
func (s Service) RemoveProjectToken(ctx context.Context, key types.NamespacedName, role, id string) (v1alpha1.JWTToken, error) {
	var removed *v1alpha1.JWTToken
	_, err := s.UpdateProject(ctx, key, func(p *v1alpha1.AppProject) { removed = removeToken(p, role, id) })
	if err != nil {
		return v1alpha1.JWTToken{}, err
	}
	if removed == nil {
		return v1alpha1.JWTToken{}, ErrTokenNotFound
	}
	return *removed, nil
}

// addToken appends tok to role's tokens; false, changing nothing more,
// when the role has a token with its ID.
func addToken(p *v1alpha1.AppProject, role string, tok v1alpha1.JWTToken) bool {
	for i := range p.Spec.Roles {
		r := &p.Spec.Roles[i]
		if r.Name != role {
			continue
		}
		if slices.ContainsFunc(r.JWTTokens, func(t v1alpha1.JWTToken) bool { return t.ID == tok.ID }) {
			return false
		}
		r.JWTTokens = append(r.JWTTokens, tok)
	}
	return true
}

// removeToken deletes the token id of role from the spec and the status,
// and returns the record found first; nil when there is none.
func removeToken(p *v1alpha1.AppProject, role, id string) *v1alpha1.JWTToken {
	var removed *v1alpha1.JWTToken
	for i := range p.Spec.Roles {
		r := &p.Spec.Roles[i]
		if r.Name != role {
			continue
		}
		if j := slices.IndexFunc(r.JWTTokens, func(t v1alpha1.JWTToken) bool { return t.ID == id }); j >= 0 {
			t := r.JWTTokens[j]
			removed = &t
			r.JWTTokens = slices.Delete(r.JWTTokens, j, j+1)
		}
	}
	if list, ok := p.Status.JWTTokensByRole[role]; ok {
		list.Items = slices.DeleteFunc(list.Items, func(t v1alpha1.JWTToken) bool {
			if t.ID == id && removed == nil {
				removed = &t
			}
			return t.ID == id
		})
		p.Status.JWTTokensByRole[role] = list
	}
	return removed
}
