package apiserver

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/resolvers"
)

// Authenticator turns the token of a request into its principal.
// auth.Sessions implements it.
type Authenticator interface {
	// Authenticate returns ctx carrying the principal token stands for,
	// or an error when the token is not valid (bad signature, expired,
	// revoked, for a disabled account...). The error's text is safe to
	// show and never holds the token.
	Authenticate(ctx context.Context, token string) (context.Context, error)
	// Bind returns a context that ends, with a reason, when the session
	// of ctx does (its token expires or is revoked) or when ctx does.
	// Long-lived requests (websockets) run in it.
	Bind(ctx context.Context) context.Context
}

// authenticate puts the principal of each request's token in its
// context; a request without a token goes on anonymous, one with an
// invalid token is refused with 401.
func authenticate(a Authenticator, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := auth.RequestToken(r)
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := a.Authenticate(r.Context(), token)
		if err != nil {
			writeGraphQLError(w, http.StatusUnauthorized, err.Error(), resolvers.CodeUnauthenticated)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// initPayloadToken returns the token of a websocket's connection_init
// payload: {"authorization": "Bearer <token>"} as graphql-ws clients send
// headers, or {"token": "<token>"}.
func initPayloadToken(p transport.InitPayload) string {
	if s := p.Authorization(); s != "" {
		return auth.BearerToken(s)
	}
	return p.GetString("token")
}

// socketSession authenticates a websocket: by the token of its
// connection_init payload when there is one, else by the upgrade
// request's. The socket then lives only as long as its session.
func socketSession(ctx context.Context, a Authenticator, p transport.InitPayload) (context.Context, error) {
	if a == nil {
		return ctx, nil
	}
	if token := initPayloadToken(p); token != "" {
		var err error
		if ctx, err = a.Authenticate(ctx, token); err != nil {
			return transport.WithWebsocketCloseCode(ctx, closeUnauthorized), err
		}
	}
	return a.Bind(ctx), nil
}

// closeUnauthorized is the close code graphql-ws gives "Unauthorized".
const closeUnauthorized = 4401
