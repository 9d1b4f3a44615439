package server

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

	"github.com/graphcd/graphcd/graph"
	"github.com/graphcd/graphcd/resolvers"
)

// internalMessage is all a client learns about an error not marked safe.
const internalMessage = "internal error"

func newGraphQL(root *resolvers.Resolver, log *slog.Logger) http.Handler {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: root}))
	srv.AddTransport(transport.Websocket{
		KeepAlivePingInterval: 10 * time.Second,
		ErrorFunc: func(ctx context.Context, err error) {
			log.DebugContext(ctx, "graphql websocket", "err", err, "request_id", requestID(ctx))
		},
	})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.SetErrorPresenter(presentError(log))
	srv.SetRecoverFunc(recoverPanic(log))
	return srv
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
		r.Body = io.NopCloser(bytes.NewReader(body))
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
