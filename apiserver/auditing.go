package apiserver

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/auth"
)

// withClient puts the address of each request's client in its context
// for the audit trail, by the rule of the login limits: X-Forwarded-For
// only from trusted proxies.
func withClient(proxies []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := r.RemoteAddr
		if a, ok := auth.ClientAddr(r, proxies); ok {
			addr = a.String()
		}
		next.ServeHTTP(w, r.WithContext(audit.WithClient(r.Context(), addr)))
	})
}

// auditMutations records every mutation field of an authenticated caller
// in log: it opens the field's audit.Recorder, which the writers fill,
// and records the entry once the field has resolved, with the code of
// the error the field ended with. Callers without a session are refused
// before anything runs and are not recorded, so that nobody can flush
// the bounded log without logging in.
func auditMutations(log *audit.Log, authenticated func(context.Context) bool) graphql.RootFieldMiddleware {
	return func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		op := graphql.GetOperationContext(ctx)
		fc := graphql.GetRootFieldContext(ctx)
		if log == nil || op.Operation == nil || op.Operation.Operation != ast.Mutation || fc == nil ||
			fc.Field.Name == "__typename" || !authenticated(ctx) {
			return next(ctx)
		}
		ctx, rec := audit.Begin(ctx)
		start := time.Now()
		seen := len(graphql.GetErrors(ctx))
		out := next(ctx)
		p, _ := auth.FromContext(ctx)
		name := op.OperationName // the request's operationName, else the document's
		if name == "" {
			name = op.Operation.Name
		}
		e := rec.Entry(audit.Call{
			Time: start, Principal: p, Client: audit.ClientFrom(ctx),
			Operation: name, Field: fc.Field.Name,
			ErrorCode: fieldErrorCode(graphql.GetErrors(ctx)[seen:], fc.Field.Alias),
		})
		log.Record(ctx, &e)
		return out
	}
}

// fieldErrorCode returns the code of the first error of the root field
// alias among errs ("" when it has none); errors of the fields under it
// (the answer's) are not the mutation's.
func fieldErrorCode(errs gqlerror.List, alias string) string {
	for _, e := range errs {
		if len(e.Path) != 1 || e.Path[0] != ast.PathName(alias) {
			continue
		}
		if code, ok := e.Extensions["code"].(string); ok && code != "" {
			return code
		}
		return "ERROR"
	}
	return ""
}
