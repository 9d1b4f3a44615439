package resolvers

import (
	"context"
	"errors"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/graph/model"
)

// AccountService manages local accounts, their passwords and tokens, and
// project role tokens (auth.Sessions implements it).
type AccountService interface {
	List() []accounts.Account
	ChangePassword(ctx context.Context, caller, account, current, next string) error
	CreateAccountToken(ctx context.Context, account, id string, ttl time.Duration) (string, *session.Claims, error)
	DeleteAccountToken(ctx context.Context, account, id string) error
	IssueProjectToken(ctx context.Context, project, role, id string, ttl time.Duration) (string, *session.Claims, error)
	RevokeToken(ctx context.Context, subject, id string, until time.Time) error
}

// maxTokenID bounds a token ID given by the client.
const maxTokenID = 128

func (r *Resolver) accountService() (AccountService, error) {
	if r.AccountService == nil {
		return nil, Errorf(CodeForbidden, "local accounts are not available on this server")
	}
	return r.AccountService, nil
}

// caller returns the subject of the request; anonymous callers have no
// account.
func caller(ctx context.Context) (string, error) {
	p, ok := auth.FromContext(ctx)
	if !ok {
		return "", Errorf(CodeUnauthenticated, "log in first")
	}
	return p.Subject, nil
}

// accountFor returns the account a request names (the caller's own when
// nil), authorizing action on another one: a user may always manage their
// own password and tokens, as in Argo CD.
func (r *Resolver) accountFor(ctx context.Context, name *string, action string) (self, account string, err error) {
	self, err = caller(ctx)
	if err != nil {
		return "", "", err
	}
	account = self
	if name != nil && *name != "" {
		account = *name
	}
	if account != self {
		if err := r.authorize(ctx, rbac.ResourceAccounts, action, accountTarget(account)); err != nil {
			return "", "", err
		}
	}
	return self, account, nil
}

func (r *Resolver) accounts(ctx context.Context) []*model.Account {
	out := []*model.Account{}
	if r.AccountService == nil {
		return out
	}
	self, _ := caller(ctx)
	for _, a := range r.AccountService.List() {
		if a.Name != self && !r.can(ctx, rbac.ResourceAccounts, rbac.ActionGet, a.Name) {
			continue
		}
		m := &model.Account{Name: a.Name, Enabled: a.Enabled, Capabilities: []string{}, Tokens: []*v1alpha1.JWTToken{}}
		for _, c := range a.Capabilities {
			m.Capabilities = append(m.Capabilities, string(c))
		}
		if !a.PasswordMtime.IsZero() {
			t := metav1.NewTime(a.PasswordMtime)
			m.PasswordChangedAt = &t
		}
		for _, t := range a.Tokens {
			m.Tokens = append(m.Tokens, &v1alpha1.JWTToken{ID: t.ID, IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt})
		}
		out = append(out, m)
	}
	return out
}

func (r *Resolver) updatePassword(ctx context.Context, in model.UpdatePasswordInput) (bool, error) {
	svc, err := r.accountService()
	if err != nil {
		return false, err
	}
	self, account, err := r.accountFor(ctx, in.Account, rbac.ActionUpdate)
	if err != nil {
		return false, err
	}
	return true, accountError(svc.ChangePassword(ctx, self, account, in.CurrentPassword, in.NewPassword))
}

func (r *Resolver) createAccountToken(ctx context.Context, in model.CreateAccountTokenInput) (*model.NewToken, error) {
	svc, err := r.accountService()
	if err != nil {
		return nil, err
	}
	_, account, err := r.accountFor(ctx, in.Account, rbac.ActionUpdate)
	if err != nil {
		return nil, err
	}
	id, ttl, err := tokenArgs(in.ID, in.ExpiresIn)
	if err != nil {
		return nil, err
	}
	token, c, err := svc.CreateAccountToken(ctx, account, id, ttl)
	if err != nil {
		return nil, accountError(err)
	}
	return newToken(token, c, ttl), nil
}

func (r *Resolver) deleteAccountToken(ctx context.Context, account *string, id string) (bool, error) {
	svc, err := r.accountService()
	if err != nil {
		return false, err
	}
	_, name, err := r.accountFor(ctx, account, rbac.ActionUpdate)
	if err != nil {
		return false, err
	}
	return true, accountError(svc.DeleteAccountToken(ctx, name, id))
}

// projectForTokens returns the project name when the caller may update it
// and it has role; a project the caller may not see is NOT_FOUND.
func (r *Resolver) projectForTokens(ctx context.Context, project, role string) (*v1alpha1.AppProject, error) {
	if r.Projects == nil || !r.can(ctx, rbac.ResourceProjects, rbac.ActionGet, project) {
		return nil, Errorf(CodeNotFound, "project %s not found", project)
	}
	p, err := r.Projects.Project(ctx, project)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, Errorf(CodeNotFound, "project %s not found", project)
	}
	if err := r.authorize(ctx, rbac.ResourceProjects, rbac.ActionUpdate, projectTarget(project)); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(p.Spec.Roles, func(x v1alpha1.ProjectRole) bool { return x.Name == role }) {
		return nil, Errorf(CodeNotFound, "project %s has no role %s", project, role)
	}
	return p, nil
}

func (r *Resolver) createProjectToken(ctx context.Context, in model.CreateProjectTokenInput) (*model.NewToken, error) {
	svc, err := r.accountService()
	if err != nil {
		return nil, err
	}
	pw, err := r.projectWriter()
	if err != nil {
		return nil, err
	}
	p, err := r.projectForTokens(ctx, in.Project, in.Role)
	if err != nil {
		return nil, err
	}
	id, ttl, err := tokenArgs(in.ID, in.ExpiresIn)
	if err != nil {
		return nil, err
	}
	token, c, err := svc.IssueProjectToken(ctx, in.Project, in.Role, id, ttl)
	if err != nil {
		return nil, err
	}
	rec := v1alpha1.JWTToken{ID: auth.TokenID(c), IssuedAt: c.IssuedAt.Unix()}
	if ttl > 0 {
		rec.ExpiresAt = c.ExpiresAt.Unix()
	}
	err = pw.AddProjectToken(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, in.Role, rec)
	if errors.Is(err, appops.ErrTokenExists) {
		return nil, Errorf(CodeConflict, "role %s of project %s already has a token %q", in.Role, in.Project, rec.ID)
	}
	if err != nil {
		return nil, err
	}
	return newToken(token, c, ttl), nil
}

func (r *Resolver) deleteProjectToken(ctx context.Context, project, role, id string) (bool, error) {
	svc, err := r.accountService()
	if err != nil {
		return false, err
	}
	pw, err := r.projectWriter()
	if err != nil {
		return false, err
	}
	p, err := r.projectForTokens(ctx, project, role)
	if err != nil {
		return false, err
	}
	removed, err := pw.RemoveProjectToken(ctx, types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, role, id)
	if errors.Is(err, appops.ErrTokenNotFound) {
		return false, Errorf(CodeNotFound, "role %s of project %s has no token %q", role, project, id)
	}
	if err != nil {
		return false, err
	}
	return true, svc.RevokeToken(ctx, rbac.ProjectRoleSubject(project, role), id, auth.ProjectTokenEnd(removed))
}

// tokenArgs checks a token request's ID and lifetime.
func tokenArgs(id, expiresIn *string) (string, time.Duration, error) {
	var out string
	if id != nil {
		out = *id
		if len(out) > maxTokenID {
			return "", 0, Errorf(CodeBadUserInput, "id must be at most %d bytes", maxTokenID)
		}
	}
	var ttl time.Duration
	if expiresIn != nil && *expiresIn != "" {
		d, err := time.ParseDuration(*expiresIn)
		if err != nil || d <= 0 {
			return "", 0, Errorf(CodeBadUserInput, "expiresIn must be a positive duration such as 720h, got %q", truncate(*expiresIn, 32))
		}
		ttl = d
	}
	return out, ttl, nil
}

func newToken(token string, c *session.Claims, ttl time.Duration) *model.NewToken {
	out := &model.NewToken{ID: auth.TokenID(c), Token: token, IssuedAt: metav1.NewTime(c.IssuedAt.Time)}
	if ttl > 0 {
		t := metav1.NewTime(c.ExpiresAt.Time)
		out.ExpiresAt = &t
	}
	return out
}

// accountError maps the account errors to codes clients can act on.
func accountError(err error) error {
	var le *auth.LoginError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &le):
		return Errorf(CodeForbidden, "%s", le.Error())
	case errors.Is(err, accounts.ErrPasswordPolicy):
		return Errorf(CodeBadUserInput, "%s", accounts.ErrPasswordPolicy.Error())
	case errors.Is(err, accounts.ErrNotFound), errors.Is(err, accounts.ErrTokenNotFound):
		return Errorf(CodeNotFound, "no such account or token")
	case errors.Is(err, accounts.ErrTokenExists):
		return Errorf(CodeConflict, "the account already has a token with that id")
	case errors.Is(err, auth.ErrNoAPIKey), errors.Is(err, accounts.ErrNoCapability), errors.Is(err, accounts.ErrDisabled):
		return Errorf(CodeForbidden, "%s", auth.ErrNoAPIKey.Error())
	}
	return err
}
