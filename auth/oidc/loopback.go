package oidc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/oauth2"
)

// LoopbackLogin logs a command-line user in: it listens on a random port
// of 127.0.0.1, calls browse with the provider's login URL (to open a
// browser or print it), and waits for the provider to redirect to
// http://127.0.0.1:<port>/auth/callback. The provider's client must allow
// loopback redirects; the embedded Dex registers a public "graphcd-cli"
// client that does. Redirects that do not carry this login's state are
// answered 400 and do not end the wait.
func (p *Provider) LoopbackLogin(ctx context.Context, browse func(loginURL string) error) (Identity, *oauth2.Token, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return Identity{}, nil, fmt.Errorf("oidc: listen for the login redirect: %w", err)
	}
	defer func() { _ = ln.Close() }()
	redirect := fmt.Sprintf("http://%s/auth/callback", ln.Addr())
	l, err := p.StartLogin(ctx, redirect)
	if err != nil {
		return Identity{}, nil, err
	}
	type result struct {
		id  Identity
		tok *oauth2.Token
		err error
	}
	results := make(chan result, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth/callback", func(w http.ResponseWriter, r *http.Request) {
		id, tok, err := p.FinishLogin(r.Context(), l, r.URL.Query())
		if errors.Is(err, errState) {
			plain(w, http.StatusBadRequest, msgBadRequest)
			return
		}
		if err != nil {
			plain(w, http.StatusUnauthorized, msgRefused)
		} else {
			plain(w, http.StatusOK, "Logged in. You may close this window.\n")
		}
		// The wait below ends and closes the server as soon as it has
		// the result: the browser must have its page first.
		_ = http.NewResponseController(w).Flush()
		select {
		case results <- result{id, tok, err}:
		default: // a second valid redirect; the first one counts
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		// Let a page being written reach its browser, briefly.
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if srv.Shutdown(shutdown) != nil {
			_ = srv.Close()
		}
	}()
	if err := browse(l.URL); err != nil {
		return Identity{}, nil, fmt.Errorf("oidc: open the login page: %w", err)
	}
	select {
	case r := <-results:
		if r.err != nil {
			return Identity{}, nil, fmt.Errorf("oidc: login: %w", r.err)
		}
		return r.id, r.tok, nil
	case <-ctx.Done():
		return Identity{}, nil, ctx.Err()
	}
}
