// Package apiserver is graphcd's API server: it assembles the HTTP
// endpoints and runs them on one listener:
//
//	/healthz      200 "ok" while the process serves (liveness)
//	/readyz       200 "ok" when Options.Ready returns nil, else 503 and the reason
//	/metrics      Prometheus metrics from Options.Registry
//	/api/graphql  the GraphQL API: JSON POST and websocket (graphql-transport-ws)
//	/api/webhook  Git push webhooks, when Options.Webhook is set
//	/api/badge    status badges (SVG), when Options.Badge is set
//	/api/terminal the console's web terminal (websocket), when Options.Terminal is set
//	/             the web console
//
// Its sub-packages are the services the resolvers call: the application
// index (appindex), the informer caches and reads (catalog), the writes
// behind the mutations (appops, secretops) and the webhook receiver.
// Both graphcd server and the resolvers' tests assemble the API with New.
//
// Use:
//
//	srv, err := apiserver.New(apiserver.Options{Listen: "127.0.0.1:0", Ready: check, Logger: log,
//		API: resolvers.Config{Apps: index, Writer: ops, ...}})
//	if err != nil { ... }
//	if err := srv.Listen(ctx); err != nil { ... }
//	log.Info("serving", "addr", srv.Addr())
//	err = srv.Run(ctx) // serves until ctx is done, then shuts down gracefully
package apiserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/badge"
	"github.com/graphcd/graphcd/apiserver/terminal"
	"github.com/graphcd/graphcd/apiserver/webhook"
	"github.com/graphcd/graphcd/console"
	"github.com/graphcd/graphcd/internal/version"
	"github.com/graphcd/graphcd/resolvers"
)

// DefaultListen is the address served when Options.Listen is empty. It is
// loopback so that a freshly started server is not exposed by accident.
const DefaultListen = "127.0.0.1:8080"

// Defaults for the zero values in Options.
const (
	DefaultShutdownTimeout = 10 * time.Second
	DefaultMaxBodyBytes    = 1 << 20
	DefaultReadyCacheTTL   = time.Second
	DefaultReadyTimeout    = 5 * time.Second
)

// ReadyFunc reports whether the server can do useful work. A nil error means
// ready; a non-nil error is the reason it is not, shown by /readyz.
type ReadyFunc func(ctx context.Context) error

// Options configures a Server. The zero value serves on DefaultListen, is
// always ready, and logs nothing.
type Options struct {
	// Listen is the TCP address to serve on, e.g. "127.0.0.1:8080".
	// Port 0 picks a free port; read it with Addr after Listen.
	Listen string
	// Ready backs /readyz. Nil means always ready.
	Ready ReadyFunc
	// Logger receives request logs (debug), errors and lifecycle events. Nil discards.
	Logger *slog.Logger
	// Registry receives the HTTP metrics and is served on /metrics. Nil
	// means a new registry from NewRegistry.
	Registry *prometheus.Registry
	// ArgoCDNames serves the families of Registry that Argo CD also serves
	// under its argocd_ names too (--metrics-argocd-names).
	ArgoCDNames bool
	// API is what the GraphQL resolvers serve from. Its zero value
	// serves an API without applications that reports version.Get().
	API resolvers.Config
	// Webhook, when set, receives Git pushes on POST /api/webhook.
	Webhook *webhook.Options
	// Badge, when set, serves status badges on GET /api/badge.
	Badge *badge.Options
	// Terminal, when set, serves the console's web terminal on GET
	// /api/terminal. Its Authorizer, Bind, CheckOrigin, Namespace and
	// Logger are the server's: the API's resolvers, the Authenticator's
	// sessions, the origins of the GraphQL websocket.
	Terminal *terminal.Options
	// ShutdownTimeout bounds the graceful shutdown in Run. Zero means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// MaxBodyBytes caps a GraphQL request body; larger bodies get 413.
	// Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// ReadyCacheTTL is how long a readiness result is reused, so a flood of
	// probes costs one check. Zero means DefaultReadyCacheTTL; negative
	// disables the cache.
	ReadyCacheTTL time.Duration
	// ReadyTimeout bounds one call of Ready. Zero means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// MaxComplexity rejects GraphQL operations that cost more (each field
	// costs one; a connection's selection costs times its page size).
	// Zero means DefaultMaxComplexity.
	MaxComplexity int
	// MaxDepth rejects GraphQL operations nested deeper. Zero means
	// DefaultMaxDepth.
	MaxDepth int
	// MaxTokens rejects GraphQL documents with more tokens before they are
	// parsed further. Zero means DefaultMaxTokens.
	MaxTokens int
	// MaxSelections rejects GraphQL documents with more selections
	// (fields, inline fragments, fragment spreads) once every fragment
	// spread is expanded, before they are validated. Zero means
	// DefaultMaxSelections.
	MaxSelections int
	// MaxFragmentSpreads rejects GraphQL documents with more fragment
	// spreads. Zero means DefaultMaxFragmentSpreads.
	MaxFragmentSpreads int
	// MaxFieldRepeats rejects GraphQL documents that select one place of
	// the response more often (through fragments, or under fields of the
	// same name). Zero means DefaultMaxFieldRepeats.
	MaxFieldRepeats int
	// AnonymousMaxTokens and AnonymousMaxSelections replace MaxTokens and
	// MaxSelections (when smaller) for requests without a session when
	// such callers may ask only the public fields. Zero means
	// DefaultAnonymousMaxTokens and DefaultAnonymousMaxSelections.
	AnonymousMaxTokens, AnonymousMaxSelections int
	// DisableIntrospection turns schema introspection off.
	DisableIntrospection bool
	// AllowedOrigins are origins (scheme://host[:port]) besides the
	// server's own from which browsers may open the GraphQL websocket.
	AllowedOrigins []string
	// MaxSubscriptions is how many subscriptions one websocket may carry
	// at once. Zero means resolvers.DefaultMaxSubscriptions.
	MaxSubscriptions int
	// WebsocketWriteTimeout bounds the write of one websocket frame: a
	// client that stops reading for longer is disconnected. Zero means
	// DefaultWebsocketWriteTimeout.
	WebsocketWriteTimeout time.Duration
	// WebsocketPingInterval is how often the server pings a
	// graphql-transport-ws client; a client that answers no ping for two
	// intervals is disconnected, so a dead peer's subscriptions end. Zero
	// means DefaultWebsocketPingInterval.
	WebsocketPingInterval time.Duration
	// Authenticator finds the principal of each request's token (bearer
	// header, session cookie or websocket connection_init). Nil means no
	// request has a principal.
	Authenticator Authenticator
	// Routes are more handlers to serve (login, SSO callback, Dex).
	Routes []Route
	// TrustedProxies are the addresses of reverse proxies whose
	// X-Forwarded-For names the client the audit trail records (the rule
	// of auth.ClientAddr). Empty means none: the peer's address counts.
	TrustedProxies []netip.Prefix
	// Audit, when set, records every mutation (see package audit).
	Audit *audit.Log
	// TLS, when set, serves HTTPS (and HTTP/2 where its NextProtos offer
	// it) instead of plain HTTP. A plain-HTTP request to it gets 400 and
	// a message saying the server speaks HTTPS.
	TLS *tls.Config
}

// Route is a handler served at a ServeMux pattern; Name labels its
// metrics.
type Route struct {
	Pattern, Name string
	Handler       http.Handler
}

// Server is graphcd's HTTP server. Create it with New.
type Server struct {
	opts     Options
	log      *slog.Logger
	registry *prometheus.Registry
	handler  http.Handler
	http     *http.Server
	// cancelBase ends the contexts of all requests. Shutdown does not wait
	// for hijacked (websocket) connections; Run cancels their context once
	// the ordinary requests have drained.
	cancelBase context.CancelFunc

	mu sync.Mutex
	ln net.Listener
}

// New validates opts and assembles the handler. It does not listen; call
// Listen (optional) and Run.
func New(opts Options) (*Server, error) {
	opts = withDefaults(opts)
	if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
		return nil, fmt.Errorf("listen address %q: %w", opts.Listen, err)
	}
	member, anonymous := documentLimitsOf(opts)
	if err := errors.Join(member.validate("GraphQL"), anonymous.validate("anonymous GraphQL")); err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger, registry: opts.Registry}
	m, err := newMetrics(s.registry)
	if err != nil {
		return nil, err
	}
	shared, err := newSharedSubscriptions(s.registry)
	if err != nil {
		return nil, err
	}
	operations, err := newOperationMetrics(s.registry)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	ready := &readiness{check: opts.Ready, ttl: opts.ReadyCacheTTL, timeout: opts.ReadyTimeout}
	s.handle(mux, m, "GET /healthz", "healthz", http.HandlerFunc(healthz))
	s.handle(mux, m, "GET /readyz", "readyz", ready.handler(s.log))
	s.handle(mux, m, "GET /metrics", "metrics", metricsHandler(s.registry, opts.ArgoCDNames, s.log))
	baseCtx, cancelBase := context.WithCancel(context.Background())
	api := resolvers.New(opts.API)
	s.handle(mux, m, "/api/graphql", "graphql", withClient(opts.TrustedProxies, authenticate(opts.Authenticator, limitBody(opts.MaxBodyBytes, newGraphQL(api, graphQLOptions{
		maxComplexity: opts.MaxComplexity, documents: member, anonymousDocuments: anonymous,
		disableIntrospection: opts.DisableIntrospection, allowedOrigins: opts.AllowedOrigins, websocketWriteTimeout: cmp.Or(opts.WebsocketWriteTimeout, DefaultWebsocketWriteTimeout),
		websocketPingInterval: cmp.Or(opts.WebsocketPingInterval, DefaultWebsocketPingInterval),
		maxSubscriptions:      opts.MaxSubscriptions, authenticator: opts.Authenticator,
		sockets: baseCtx, shared: shared, audit: opts.Audit, metrics: operations,
	}, s.log)))))
	for _, r := range opts.Routes {
		s.handle(mux, m, r.Pattern, r.Name, r.Handler)
	}
	if opts.Webhook != nil {
		// Providers cannot log in: the webhook authenticates with their secrets.
		s.handle(mux, m, "POST /api/webhook", "webhook", webhook.New(*opts.Webhook))
	}
	if opts.Badge != nil {
		// Badges are public: README files show them to anyone.
		s.handle(mux, m, "GET /api/badge", "badge", badge.New(*opts.Badge))
	}
	if opts.Terminal != nil {
		s.handle(mux, m, "GET /api/terminal", "terminal", withClient(opts.TrustedProxies, authenticate(opts.Authenticator, s.terminal(api))))
	}
	s.handle(mux, m, "/api/", "api_not_found", http.NotFoundHandler())
	s.handle(mux, m, "/", "console", console.Handler())
	s.handler = mux

	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
		TLSConfig:         opts.TLS,
	}
	s.cancelBase = cancelBase
	return s, nil
}

// terminal returns the web terminal's handler, admitting sessions as the
// API authorizes and binding them to the caller's session as the GraphQL
// websocket is.
func (s *Server) terminal(api *resolvers.Resolver) http.Handler {
	o := *s.opts.Terminal
	o.Authorizer, o.Namespace, o.Logger = api, s.opts.API.Namespace, s.log
	o.CheckOrigin = newGorillaWebsocket(s.opts.AllowedOrigins, 0).checkOrigin
	if s.opts.Authenticator != nil {
		o.Bind = s.opts.Authenticator.Bind
	}
	return terminal.New(o)
}

func withDefaults(o Options) Options {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Ready == nil {
		o.Ready = func(context.Context) error { return nil }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = NewRegistry()
	}
	if o.API.Build == (version.Info{}) {
		o.API.Build = version.Get()
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.ReadyCacheTTL == 0 {
		o.ReadyCacheTTL = DefaultReadyCacheTTL
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.MaxComplexity == 0 {
		o.MaxComplexity = DefaultMaxComplexity
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxSelections == 0 {
		o.MaxSelections = DefaultMaxSelections
	}
	if o.MaxFragmentSpreads == 0 {
		o.MaxFragmentSpreads = DefaultMaxFragmentSpreads
	}
	if o.MaxFieldRepeats == 0 {
		o.MaxFieldRepeats = DefaultMaxFieldRepeats
	}
	if o.AnonymousMaxTokens == 0 {
		o.AnonymousMaxTokens = DefaultAnonymousMaxTokens
	}
	if o.AnonymousMaxSelections == 0 {
		o.AnonymousMaxSelections = DefaultAnonymousMaxSelections
	}
	return o
}

// Handler returns the server's routes, for use with httptest.
func (s *Server) Handler() http.Handler { return s.handler }

// Listen binds Options.Listen. Calling it before Run lets the caller learn
// the address (Addr) and report a busy port before anything else starts.
func (s *Server) Listen(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		return errors.New("server already listening")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opts.Listen)
	if err != nil {
		return err // "listen tcp 127.0.0.1:8080: bind: address already in use"
	}
	s.ln = ln
	return nil
}

// Addr returns the bound address, or nil before Listen.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Run serves until ctx is done, then stops accepting connections and waits
// up to Options.ShutdownTimeout for in-flight requests. It calls Listen if
// the caller has not. It returns nil after a clean shutdown. Call it once.
func (s *Server) Run(ctx context.Context) error {
	if s.Addr() == nil {
		if err := s.Listen(ctx); err != nil {
			return err
		}
	}
	s.mu.Lock()
	ln := s.ln
	s.mu.Unlock()
	defer s.cancelBase()

	served := make(chan error, 1)
	scheme := "HTTP"
	if s.opts.TLS != nil {
		scheme = "HTTPS"
		go func() { served <- s.http.ServeTLS(ln, "", "") }()
	} else {
		go func() { served <- s.http.Serve(ln) }()
	}
	s.log.InfoContext(ctx, "serving "+scheme, "addr", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.Info("shutting down HTTP server",
		"reason", context.Cause(ctx).Error(), "timeout", s.opts.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	if err := s.http.Shutdown(shutdownCtx); err != nil {
		_ = s.http.Close()
		return fmt.Errorf("shutdown: requests still running after %s", s.opts.ShutdownTimeout)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	s.log.Info("HTTP server stopped")
	return nil
}
