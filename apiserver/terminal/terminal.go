package terminal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/audit"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/resolvers"
)

// Authorizer admits terminals (resolvers.Resolver implements it).
type Authorizer interface {
	// ExecAllowed returns the app's project and destination when the
	// caller of ctx may open a terminal into req, else a *resolvers.Error.
	ExecAllowed(ctx context.Context, req resolvers.ExecRequest) (resolvers.ExecTarget, error)
	// Changed returns a channel closed at the next policy change.
	Changed() <-chan struct{}
}

// Executor runs a command with a terminal in a container (catalog.PodExec
// implements it).
type Executor interface {
	Exec(ctx context.Context, dest v1alpha1.ApplicationDestination, namespace, pod, container string, command []string, s catalog.ExecStreams) error
}

// Settings give exec.enabled and exec.shells (catalog.Settings
// implements it).
type Settings interface {
	Exec() catalog.ExecSettings
}

// Recorder writes the Events of sessions (audit.EventWriter implements it).
type Recorder interface {
	TerminalStarted(ctx context.Context, s audit.TerminalSession) error
	TerminalEnded(ctx context.Context, s audit.TerminalSession, end time.Time, why string) error
}

// Defaults of the zero values in Options.
const (
	DefaultIdleTimeout        = 30 * time.Minute
	DefaultMaxSessionsPerUser = 4
	DefaultWriteTimeout       = 10 * time.Second
	// DefaultInputRate is how many bytes of input a session takes per
	// second, on average; pasting more waits.
	DefaultInputRate = 16 << 10
)

// maxMessage bounds one message from the client: a paste of a few pages.
const maxMessage = 64 << 10

// Options configure the terminal's handler.
type Options struct {
	// Authorizer admits sessions and re-admits them on policy changes.
	Authorizer Authorizer
	// Exec runs the shells.
	Exec Executor
	// Settings say whether terminals are enabled and which shells to
	// try; nil keeps them disabled.
	Settings Settings
	// Events, when set, records every session's start and end.
	Events Recorder
	// Bind returns a context that ends with the caller's session (its
	// token expiring or being revoked); nil means the request's.
	Bind func(ctx context.Context) context.Context
	// CheckOrigin accepts or refuses the Origin of the handshake.
	CheckOrigin func(*http.Request) bool
	// Namespace is the applications' namespace when the request names
	// none.
	Namespace string
	// Logger receives the sessions' failures. Nil discards.
	Logger *slog.Logger
	// IdleTimeout ends a session without input for that long. Zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxSessionsPerUser bounds the sessions one user has open on this
	// server. Zero means DefaultMaxSessionsPerUser.
	MaxSessionsPerUser int
	// WriteTimeout bounds the write of one frame. Zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// InputRate is how many input bytes a session takes per second.
	// Zero means DefaultInputRate.
	InputRate int
}

// Handler serves terminals; make it with New.
type Handler struct {
	opts     Options
	log      *slog.Logger
	upgrader websocket.Upgrader

	mu sync.Mutex
	// open counts each user's open sessions.
	open map[string]int
}

// New returns the handler of o.
func New(o Options) *Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxSessionsPerUser == 0 {
		o.MaxSessionsPerUser = DefaultMaxSessionsPerUser
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.InputRate == 0 {
		o.InputRate = DefaultInputRate
	}
	return &Handler{
		opts: o, log: o.Logger, open: map[string]int{},
		upgrader: websocket.Upgrader{
			HandshakeTimeout: 10 * time.Second,
			CheckOrigin:      o.CheckOrigin,
			ReadBufferSize:   4 << 10,
			WriteBufferSize:  4 << 10,
		},
	}
}

// Close codes of a terminal's socket besides the standard ones (1000
// when the shell exits, 1001 when the server stops). The reason says
// more.
const (
	CloseBadRequest      = 4400
	CloseUnauthenticated = 4401
	CloseForbidden       = 4403
	CloseNotFound        = 4404
	CloseIdle            = 4408
	CloseTooMany         = 4429
	CloseInternal        = 4500
)

// ServeHTTP upgrades the request and runs its session. Every refusal
// after the handshake (terminals disabled, a bad request, no permission)
// is a close code and a reason the console can show, which a refused
// handshake could not give a browser.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	conn, err := h.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // gorilla has answered
	}
	conn.SetReadLimit(maxMessage)
	c := &socket{conn: conn, writeTimeout: h.opts.WriteTimeout}
	defer func() { _ = conn.Close() }()
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("terminal session panicked", "panic", fmt.Sprint(v))
			c.close(CloseInternal, "internal error")
		}
	}()
	req, shells, code, why := h.admit(r)
	if code != 0 {
		c.close(code, why)
		return
	}
	// The socket's context: the request's values, ended by the caller's
	// session.
	ctx := r.Context()
	if h.opts.Bind != nil {
		ctx = h.opts.Bind(ctx)
	}
	target, err := h.opts.Authorizer.ExecAllowed(ctx, req)
	if err != nil {
		code, why := refusal(err)
		c.close(code, why)
		return
	}
	user := userOf(ctx)
	if !h.acquire(user) {
		c.close(CloseTooMany, fmt.Sprintf("you have %d terminals open already: close one first", h.opts.MaxSessionsPerUser))
		return
	}
	defer h.release(user)
	s := &session{h: h, sock: c, req: req, target: target, shells: shells, rec: audit.TerminalSession{
		ID: newID(), User: user, AppNamespace: req.App.Namespace, App: req.App.Name, Project: target.Project,
		Namespace: req.Namespace, Pod: req.Pod, Container: req.Container, Started: time.Now(),
	}}
	s.run(ctx)
}

// admit reads and checks the request: terminals enabled, the container
// named, the shell one of exec.shells. A non-zero code refuses it.
func (h *Handler) admit(r *http.Request) (resolvers.ExecRequest, []string, int, string) {
	var settings catalog.ExecSettings
	if h.opts.Settings != nil {
		settings = h.opts.Settings.Exec()
	}
	if !settings.Enabled {
		return resolvers.ExecRequest{}, nil, CloseForbidden, "the terminal is disabled: exec.enabled is not \"true\" in graphcd-cm"
	}
	q := r.URL.Query()
	req := resolvers.ExecRequest{
		App:       types.NamespacedName{Namespace: q.Get("appNamespace"), Name: q.Get("app")},
		Namespace: q.Get("namespace"), Pod: q.Get("pod"), Container: q.Get("container"),
	}
	if req.App.Namespace == "" {
		req.App.Namespace = h.opts.Namespace
	}
	for _, f := range []struct {
		name, value string
		check       func(string) []string
	}{
		{"app", req.App.Name, validation.IsDNS1123Subdomain},
		{"appNamespace", req.App.Namespace, validation.IsDNS1123Label},
		{"namespace", req.Namespace, validation.IsDNS1123Label},
		{"pod", req.Pod, validation.IsDNS1123Subdomain},
		{"container", req.Container, validation.IsDNS1123Label},
	} {
		if f.value == "" {
			return req, nil, CloseBadRequest, f.name + " is missing"
		}
		if len(f.check(f.value)) > 0 {
			return req, nil, CloseBadRequest, f.name + " is not a valid name"
		}
	}
	shells := settings.Shells
	if sh := q.Get("shell"); sh != "" {
		if !slices.Contains(shells, sh) {
			return req, nil, CloseBadRequest, "shell is not one of exec.shells: " + strings.Join(shells, ", ")
		}
		shells = []string{sh}
	}
	return req, shells, 0, ""
}

// refusal is the close code and reason of an ExecAllowed error.
func refusal(err error) (int, string) {
	e, ok := errors.AsType[*resolvers.Error](err)
	if !ok {
		return CloseInternal, "internal error"
	}
	switch e.Code {
	case resolvers.CodeUnauthenticated:
		return CloseUnauthenticated, e.Message
	case resolvers.CodeForbidden:
		return CloseForbidden, e.Message
	case resolvers.CodeNotFound:
		return CloseNotFound, e.Message
	case resolvers.CodeBadUserInput:
		return CloseBadRequest, e.Message
	}
	return CloseInternal, "internal error"
}

// userOf names the caller for the session's record and limit.
func userOf(ctx context.Context) string {
	if p, ok := auth.FromContext(ctx); ok && p.Subject != "" {
		return p.Subject
	}
	return "anonymous"
}

func (h *Handler) acquire(user string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[user] >= h.opts.MaxSessionsPerUser {
		return false
	}
	h.open[user]++
	return true
}

func (h *Handler) release(user string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open[user]--; h.open[user] <= 0 {
		delete(h.open, user)
	}
}
