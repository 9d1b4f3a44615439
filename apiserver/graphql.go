package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/graph"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/resolvers"
)

// internalMessage is all a client learns about an error not marked safe.
const internalMessage = "internal error"

// Defaults of the GraphQL limits.
const (
	// DefaultMaxComplexity admits a 500-app page with about 100 fields an
	// app (each app of a connection costs its fields, times first).
	DefaultMaxComplexity = 50_000
	// DefaultMaxDepth admits the deepest real query (a page of apps down
	// to a sync result's resources) with room to spare.
	DefaultMaxDepth = 15
	// DefaultMaxTokens bounds the parser's work on one query document.
	DefaultMaxTokens = 10_000
	// DefaultMaxSelections bounds the selections of a document with its
	// fragment spreads expanded, which validation, the complexity walk and
	// the executor visit: twenty-five times the console's largest
	// document (about 200).
	DefaultMaxSelections = 5_000
	// DefaultMaxFragmentSpreads bounds the fragment spreads written in a
	// document (the console's have fewer than ten): validation compares
	// the fragments spread in one place two by two.
	DefaultMaxFragmentSpreads = 200
	// DefaultMaxFieldRepeats bounds how often one place of a response is
	// selected (through fragments, or under fields of the same name):
	// validation compares those selections two by two.
	DefaultMaxFieldRepeats = 50
	// DefaultAnonymousMaxTokens bounds the documents of callers without a
	// session, who may ask only the public fields (version, settings,
	// me): the console's session query has about 20 tokens.
	DefaultAnonymousMaxTokens = 500
	// DefaultAnonymousMaxSelections bounds their selections with
	// fragments expanded.
	DefaultAnonymousMaxSelections = 200
	// websocketInitTimeout closes a socket that does not send
	// connection_init in time.
	websocketInitTimeout = 10 * time.Second
	// websocketReadLimit bounds one client message on a socket.
	websocketReadLimit = 64 << 10
	// apqCacheSize is how many persisted queries are remembered.
	apqCacheSize = 1000
	// documentCostCacheSize is how many documents' costs are remembered.
	documentCostCacheSize = 1000
)

// graphQLOptions are the API's limits and switches; see Options.
type graphQLOptions struct {
	maxComplexity int
	// documents bounds each document, anonymousDocuments those of
	// callers who may ask only the public fields.
	documents, anonymousDocuments documentLimits
	disableIntrospection          bool
	allowedOrigins                []string
	websocketWriteTimeout         time.Duration
	websocketPingInterval         time.Duration
	maxSubscriptions              int
	authenticator                 Authenticator
	// sockets ends every websocket when it is done.
	sockets context.Context
	// audit records the mutations; nil records none.
	audit *audit.Log
	// shared groups the subscribers of applicationEvents who share the
	// execution of their selection.
	shared *sharedSubscriptions
	// metrics count and time the operations.
	metrics *operationMetrics
}

func newGraphQL(root *resolvers.Resolver, opts graphQLOptions, log *slog.Logger) http.Handler {
	cfg := graph.Config{Resolvers: root}
	setComplexity(&cfg.Complexity)
	srv := handler.New(graph.NewExecutableSchema(cfg))
	readLimit := int64(websocketReadLimit)
	srv.AddTransport(sharingWebsocket{shared: opts.shared, Websocket: transport.Websocket{
		Implementation:        newGorillaWebsocket(opts.allowedOrigins, opts.websocketWriteTimeout),
		KeepAlivePingInterval: 10 * time.Second,
		PingPongInterval:      opts.websocketPingInterval,
		InitTimeout:           websocketInitTimeout,
		// Each socket counts its own subscriptions (authentication of
		// connection_init lands here with Auth).
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			ctx, err := socketSession(ctx, opts.authenticator, p)
			if err != nil {
				return ctx, nil, err
			}
			return resolvers.WithSocket(ctx, opts.maxSubscriptions), nil, nil
		},
		PayloadReadLimit: &readLimit,
		ErrorFunc: func(ctx context.Context, err error) {
			log.DebugContext(ctx, "graphql websocket", "err", err, "request_id", requestID(ctx))
		},
	}})
	// Only JSON POSTs (and the websocket): no GET, so no query or mutation
	// can be triggered by a link, and no form or text/plain bodies, which
	// browsers send cross-site without a CORS preflight.
	srv.AddTransport(jsonPOST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetParserTokenLimit(opts.documents.tokens)
	srv.SetDisableSuggestion(true)
	if opts.disableIntrospection {
		srv.Use(noIntrospection{})
	} else {
		srv.Use(extension.Introspection{})
	}
	authenticated := func(ctx context.Context) bool { return root.Authz == nil || root.Authz.Authenticated(ctx) }
	// Before the persisted queries remember a document and gqlgen's
	// query cache keeps it: both hold the text of each document.
	srv.Use(documentSize{authenticated: authenticated})
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](apqCacheSize)})
	srv.Use(extension.FixedComplexityLimit(opts.maxComplexity))
	// Registered after the persisted queries (which may supply the
	// document), it measures every document before gqlgen parses and
	// validates it, and as the last operation mutator it stops operations
	// whose client has gone before they execute.
	srv.Use(documentBudget{
		member:        opts.documents,
		anonymous:     opts.anonymousDocuments,
		authenticated: authenticated,
		costs:         lru.New[documentCost](documentCostCacheSize),
	})
	// Queries and mutations each run in a span when tracing is on.
	srv.AroundOperations(traceOperation)
	// Dataloaders live for one response, so that nothing read is reused
	// later: a query's or a mutation's operation has one. A subscription's
	// events, each about one application, have none, and every read makes
	// its own (see resolvers.Resolver.WithLoaders): a response interceptor
	// would sit in every subscriber's goroutine and, with its four frames,
	// double that goroutine's idle stack from 4 to 8 KiB.
	srv.AroundOperations(opts.metrics.around(authenticated))
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Subscription {
			ctx = root.WithLoaders(ctx)
		}
		return next(ctx)
	})
	// Only the public fields answer callers who are not logged in.
	srv.AroundRootFields(root.GuardRootField)
	// Every mutation of a caller who is goes in the audit trail.
	if opts.audit != nil {
		srv.AroundRootFields(auditMutations(opts.audit, authenticated))
	}
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(recoverPanic(log))
	return serveSockets(srv, opts.sockets)
}

// setComplexity makes lists cost what they can return: a connection's
// page costs its selection times first.
func setComplexity(c *graph.ComplexityRoot) {
	c.Query.Applications = func(child int, first int32, _ *string, _ *model.ApplicationFilter, _ *model.ApplicationOrder) int {
		return 1 + child*max(int(first), 1)
	}
	c.Query.AuditLog = func(child int, first int32, _ *string, _ *model.AuditFilter) int {
		return 1 + child*max(int(first), 1)
	}
	c.Query.ApplicationSets = func(child int, first int32, _ *string, _ *model.ApplicationSetFilter) int {
		return 1 + child*max(int(first), 1)
	}
	c.Query.DryRunApplicationSet = func(child int, _ model.DryRunApplicationSetInput, first int32) int {
		return 1 + child*max(int(first), 1)
	}
	c.ApplicationSet.Applications = func(child int, first int32, _ *string) int {
		return 1 + child*max(int(first), 1)
	}
}

// presentError decides what a client sees of an error. Errors marked safe
// (*resolvers.Error) keep their message and code; errors produced by the
// GraphQL engine itself (syntax, validation) pass unchanged; anything else is
// logged and replaced by "internal error" with the request id to quote.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		presented := graphql.DefaultErrorPresenter(ctx, err)
		id := requestID(ctx)
		if safe, ok := errors.AsType[*resolvers.Error](err); ok {
			out := &gqlerror.Error{
				Message:    safe.Message,
				Path:       presented.Path,
				Locations:  presented.Locations,
				Extensions: map[string]any{"code": string(safe.Code)},
			}
			if safe.Code == resolvers.CodeInternal {
				out.Extensions["requestId"] = id
			}
			if safe.Err != nil {
				log.DebugContext(ctx, "graphql error", "code", string(safe.Code), "err", err, "request_id", id)
			}
			return out
		}
		// Only an unwrapped *gqlerror.Error without a cause comes from the
		// engine itself (parse and validation errors); errors.As would also
		// let through resolver errors that merely wrap one.
		if gqlErr, ok := err.(*gqlerror.Error); ok && gqlErr.Err == nil { //nolint:errorlint // see above
			return gqlErr
		}
		log.ErrorContext(ctx, "graphql resolver failed", "path", presented.Path.String(), "err", err, "request_id", id)
		return &gqlerror.Error{
			Message:    internalMessage,
			Path:       presented.Path,
			Locations:  presented.Locations,
			Extensions: map[string]any{"code": string(resolvers.CodeInternal), "requestId": id},
		}
	}
}

// recoverPanic logs a resolver panic with its stack and answers with a safe
// internal error; the presenter adds the request id.
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.ErrorContext(ctx, "graphql resolver panicked",
			"panic", fmt.Sprint(p), "stack", string(debug.Stack()), "request_id", requestID(ctx))
		return &resolvers.Error{Code: resolvers.CodeInternal, Message: internalMessage}
	}
}

// limitBody rejects request bodies larger than limit with 413 and a GraphQL
// error, before the GraphQL transports read them.
func limitBody(limit int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > limit {
			writeBodyTooLarge(w, limit)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeBodyTooLarge(w, limit)
			return
		}
		if err != nil {
			writeGraphQLError(w, http.StatusBadRequest, "cannot read request body", resolvers.CodeBadUserInput)
			return
		}
		if len(body) == 0 {
			// A websocket handshake keeps its request for the socket's life.
			r.Body = http.NoBody
		} else {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

func writeBodyTooLarge(w http.ResponseWriter, limit int64) {
	msg := fmt.Sprintf("request body larger than %d bytes", limit)
	writeGraphQLError(w, http.StatusRequestEntityTooLarge, msg, resolvers.CodeBadUserInput)
}

func writeGraphQLError(w http.ResponseWriter, status int, msg string, code resolvers.Code) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(graphql.Response{Errors: gqlerror.List{{
		Message:    msg,
		Extensions: map[string]any{"code": string(code)},
	}}})
}
