package resolvers

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
)

// AuditLog reads the audit trail (an audit.Store implements it).
type AuditLog interface {
	List(ctx context.Context, q audit.Query) (audit.Page, error)
	Subscribe(ctx context.Context) <-chan audit.Entry
}

func (r *Resolver) auditLog() (AuditLog, error) {
	if r.Audit == nil {
		return nil, Errorf(CodeNotFound, "this server keeps no audit log")
	}
	return r.Audit, nil
}

// auditObject is the RBAC object of an entry for resource "audit": its
// project, or "*" for entries without one.
func auditObject(e *audit.Entry) string {
	if e.Object.Project == "" {
		return "*"
	}
	return e.Object.Project
}

// mayReadAudit returns the entries' filter of the caller's RBAC, or an
// error when the caller may read no entry at all: they need get on
// resource audit, for some project at least.
func (r *Resolver) mayReadAudit(ctx context.Context) (func(*audit.Entry) bool, error) {
	if r.Authz == nil {
		return nil, nil
	}
	if !r.Authz.Authenticated(ctx) {
		return nil, Errorf(CodeUnauthenticated, "log in first")
	}
	if !r.anyRule(ctx, rbac.ResourceAudit, rbac.ActionGet) {
		return nil, denied(rbac.ResourceAudit, rbac.ActionGet, "*")
	}
	return func(e *audit.Entry) bool {
		return r.Authz.Can(ctx, rbac.ResourceAudit, rbac.ActionGet, auditObject(e))
	}, nil
}

// memoizeAllow returns allow deciding once per project: a page may scan
// thousands of entries, of a few projects. Only for one page: a
// subscription asks again, so that it follows changes of the policy.
func memoizeAllow(allow func(*audit.Entry) bool) func(*audit.Entry) bool {
	if allow == nil {
		return nil
	}
	memo := map[string]bool{}
	return func(e *audit.Entry) bool {
		k := auditObject(e)
		ok, seen := memo[k]
		if !seen {
			ok = allow(e)
			memo[k] = ok
		}
		return ok
	}
}

// anyRule reports whether a rule of the caller may allow action on some
// object of resource.
func (r *Resolver) anyRule(ctx context.Context, resource, action string) bool {
	for _, rule := range r.Authz.Permissions(ctx) {
		if rule.Effect == rbac.Allow && (rule.Resource == resource || rule.Resource == "*") {
			return true
		}
	}
	return r.Authz.Can(ctx, resource, action, "*")
}

// auditFilter maps the API's filter.
func auditFilter(f *model.AuditFilter) audit.Filter {
	var out audit.Filter
	if f == nil {
		return out
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	out.User, out.Kind, out.Namespace, out.Name = str(f.User), str(f.Kind), str(f.Namespace), str(f.Name)
	out.Project, out.Field = str(f.Project), str(f.Mutation)
	if f.Outcome != nil {
		out.Outcome = audit.Outcome(*f.Outcome)
	}
	if f.Since != nil {
		out.Since = f.Since.Time
	}
	if f.Until != nil {
		out.Until = f.Until.Time
	}
	return out
}

// auditPage answers Query.auditLog.
func (r *Resolver) auditPage(ctx context.Context, first int32, after *string, filter *model.AuditFilter) (*model.AuditConnection, error) {
	store, err := r.auditLog()
	if err != nil {
		return nil, err
	}
	allow, err := r.mayReadAudit(ctx)
	if err != nil {
		return nil, err
	}
	if first < 1 || first > audit.MaxPage {
		return nil, Errorf(CodeBadUserInput, "first must be 1 to %d", audit.MaxPage)
	}
	q := audit.Query{First: int(first), Filter: auditFilter(filter), Allow: memoizeAllow(allow)}
	if after != nil {
		q.After = *after
	}
	p, err := store.List(ctx, q)
	if err != nil {
		if errors.Is(err, audit.ErrCursor) {
			return nil, Errorf(CodeBadUserInput, "after is not a cursor of the audit log")
		}
		return nil, &Error{Code: CodeInternal, Message: "could not read the audit log", Err: err}
	}
	out := &model.AuditConnection{PageInfo: &model.PageInfo{HasNextPage: p.More, HasPreviousPage: q.After != ""}}
	for i := range p.Entries {
		e := auditEntry(&p.Entries[i])
		out.Nodes = append(out.Nodes, e)
		out.Edges = append(out.Edges, &model.AuditEdge{Cursor: e.ID, Node: e})
	}
	out.Nodes, out.Edges = nonNil(out.Nodes), nonNil(out.Edges)
	if n := len(out.Nodes); n > 0 {
		out.PageInfo.StartCursor, out.PageInfo.EndCursor = &out.Nodes[0].ID, &out.Nodes[n-1].ID
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// streamAudit answers Subscription.auditEvents.
func (r *Resolver) streamAudit(ctx context.Context, filter *model.AuditFilter) (<-chan *model.AuditEntry, error) {
	store, err := r.auditLog()
	if err != nil {
		return nil, err
	}
	allow, err := r.mayReadAudit(ctx)
	if err != nil {
		return nil, err
	}
	release, err := acquireSubscription(ctx)
	if err != nil {
		return nil, err
	}
	f := auditFilter(filter)
	in := store.Subscribe(ctx)
	out := make(chan *model.AuditEntry, 1)
	go func() {
		defer release()
		defer close(out)
		for e := range in {
			if !f.Match(&e) || (allow != nil && !allow(&e)) {
				continue
			}
			select {
			case out <- auditEntry(&e):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// auditEntry maps an entry.
func auditEntry(e *audit.Entry) *model.AuditEntry {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	out := &model.AuditEntry{
		ID: e.ID, Time: metav1.NewTime(e.Time.Truncate(time.Second)), User: e.User, Groups: nonNil(e.Groups),
		ClientAddress: opt(e.Client), OperationName: opt(e.Operation), Mutation: e.Field,
		Object: &model.AuditObject{
			Kind: e.Object.Kind, Group: e.Object.Group, Namespace: e.Object.Namespace, Name: e.Object.Name, Project: e.Object.Project,
		},
		PatchOmitted: e.PatchOmitted, Outcome: model.AuditOutcome(e.Outcome), ErrorCode: opt(e.ErrorCode),
	}
	if len(e.Patch) > 0 {
		out.Patch = opt(string(e.Patch))
	}
	return out
}
