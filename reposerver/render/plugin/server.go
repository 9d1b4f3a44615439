package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/graphcd/graphcd/reposerver/render"
)

// Server defaults, used where a ServerOptions field is zero.
const (
	// DefaultTimeout bounds one call (receiving the repository and running
	// the commands), like Argo CD's ARGOCD_EXEC_TIMEOUT.
	DefaultTimeout = 90 * time.Second
	// DefaultMaxRepoSize bounds the sum of the file sizes of one received
	// repository: 200 MiB.
	DefaultMaxRepoSize int64 = 200 << 20
	// DefaultMaxRepoFiles bounds the entries of one received repository.
	DefaultMaxRepoFiles = 250_000
	// DefaultMaxOutputSize bounds what generate may print: 100 MiB.
	DefaultMaxOutputSize = render.DefaultMaxCombinedSize
	// DefaultConfigPath and DefaultSocketDir are where Argo CD's sidecars
	// keep their plugin.yaml and sockets.
	DefaultConfigPath = "/home/argocd/cmp-server/config/plugin.yaml"
	DefaultSocketDir  = "/home/argocd/cmp-server/plugins"
)

const (
	// maxDynamicParams bounds the output of the dynamic parameters command.
	maxDynamicParams = 10 << 20
	// maxFindOutput is how much of a find command's output is kept: only
	// whether there is any matters.
	maxFindOutput = 4 << 10
	// shutdownGrace bounds how long Serve waits for calls to end once ctx
	// is done; their commands are killed at once.
	shutdownGrace = 10 * time.Second
)

// ServerOptions configure Serve.
type ServerOptions struct {
	Config    string        // path of plugin.yaml; DefaultConfigPath when empty
	SocketDir string        // where <plugin-name>.sock is created; DefaultSocketDir when empty
	Timeout   time.Duration // per call; DefaultTimeout when zero
	Logger    *slog.Logger  // nil discards logs

	WorkDir       string   // parent of the per-call directories; os.TempDir() when empty
	MaxRepoSize   int64    // DefaultMaxRepoSize when zero
	MaxRepoFiles  int      // DefaultMaxRepoFiles when zero
	MaxOutputSize int64    // DefaultMaxOutputSize when zero
	PassEnv       []string // names of server environment variables commands may see (besides PATH)
}

func (o ServerOptions) withDefaults() ServerOptions {
	if o.Config == "" {
		o.Config = DefaultConfigPath
	}
	if o.SocketDir == "" {
		o.SocketDir = DefaultSocketDir
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.WorkDir == "" {
		o.WorkDir = os.TempDir()
	}
	if o.MaxRepoSize <= 0 {
		o.MaxRepoSize = DefaultMaxRepoSize
	}
	if o.MaxRepoFiles <= 0 {
		o.MaxRepoFiles = DefaultMaxRepoFiles
	}
	if o.MaxOutputSize <= 0 {
		o.MaxOutputSize = DefaultMaxOutputSize
	}
	return o
}

// Serve runs the plugin described by opts.Config on the Unix socket
// <SocketDir>/<plugin-name>.sock until ctx is done, then kills running
// commands, removes the socket and returns nil. A stale socket left by an
// earlier run is replaced; a live one, or another kind of file at that
// path, is an error.
func Serve(ctx context.Context, opts ServerOptions) error {
	opts = opts.withDefaults()
	cfg, err := LoadConfig(opts.Config)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(opts.WorkDir, 0o700); err != nil {
		return fmt.Errorf("create work directory: %w", err)
	}
	ln, sock, err := listen(ctx, opts.SocketDir, cfg.Name())
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(sock) }()

	s := &server{cfg: cfg, opts: opts, log: opts.Logger.With("plugin", cfg.Name())}
	hs := &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	s.log.Info("plugin server listening", "socket", sock)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve plugin %s: %w", cfg.Name(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		_ = hs.Shutdown(sctx)
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve plugin %s: %w", cfg.Name(), err)
		}
		s.log.Info("plugin server stopped")
		return nil
	}
}

// listen creates the socket with mode 0600 in a private directory and
// moves it into place, so it is never reachable with looser permissions.
func listen(ctx context.Context, dir, name string) (*net.UnixListener, string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, "", fmt.Errorf("create socket directory: %w", err)
	}
	sock := filepath.Join(dir, name+".sock")
	if fi, err := os.Lstat(sock); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, "", fmt.Errorf("%s exists and is not a socket", sock)
		}
		d := net.Dialer{Timeout: time.Second}
		if c, err := d.DialContext(ctx, "unix", sock); err == nil {
			_ = c.Close()
			return nil, "", fmt.Errorf("%s: another plugin server is listening", sock)
		}
		if err := os.Remove(sock); err != nil {
			return nil, "", fmt.Errorf("remove stale socket: %w", err)
		}
	}
	private, err := os.MkdirTemp(dir, ".cmp-")
	if err != nil {
		return nil, "", fmt.Errorf("create socket: %w", err)
	}
	defer func() { _ = os.RemoveAll(private) }()
	tmp := filepath.Join(private, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, "", fmt.Errorf("create socket: %w", err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		_ = ln.Close()
		return nil, "", fmt.Errorf("create socket: %w", err)
	}
	if err := os.Rename(tmp, sock); err != nil {
		_ = ln.Close()
		return nil, "", fmt.Errorf("create socket: %w", err)
	}
	return ln, sock, nil
}

type server struct {
	cfg  *Config
	opts ServerOptions
	log  *slog.Logger
}

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathHealth, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+pathInfo, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, pluginInfo{Name: s.cfg.Name(), Discovery: s.cfg.Spec.Discover.Enabled()})
	})
	mux.HandleFunc("POST "+pathGenerate, s.post("generate", s.generate))
	mux.HandleFunc("POST "+pathDiscover, s.post("discover", s.discover))
	mux.HandleFunc("POST "+pathParameters, s.post("parameters", s.parameters))
	return mux
}

// call is one POST: the received repository and the environment its
// commands run with.
type call struct {
	req     wireRequest
	workDir string // the call's private directory
	repoDir string // the received repository
	appDir  string // the app directory inside repoDir, symlinks resolved
	env     []string
}

// redact hides the call's directories in text sent back to the client.
func (c *call) redact(s string) string {
	if c.repoDir != "" {
		s = strings.ReplaceAll(s, c.repoDir, ".")
	}
	if c.workDir != "" {
		s = strings.ReplaceAll(s, c.workDir, "$WORKDIR")
	}
	return s
}

type op func(ctx context.Context, w http.ResponseWriter, c *call) error

var (
	errBadRequest = errors.New("bad request")
	errNoMatch    = errors.New("plugin does not support the application")
)

func (s *server) post(name string, run op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeoutCause(r.Context(), s.opts.Timeout,
			fmt.Errorf("call took longer than %s", s.opts.Timeout))
		defer cancel()
		_ = http.NewResponseController(w).SetReadDeadline(start.Add(s.opts.Timeout))

		c, err := s.receive(ctx, w, r)
		if c != nil {
			defer s.cleanup(c.workDir)
		}
		if err == nil && c.req.RequireMatch && name != "discover" && s.cfg.Spec.Discover.Enabled() {
			var ok bool
			if ok, err = s.match(ctx, c); err == nil && !ok {
				err = errNoMatch
			}
		}
		if err == nil {
			err = run(ctx, w, c)
		}
		if err != nil && ctx.Err() != nil && !errors.Is(err, ErrTimeout) {
			err = fmt.Errorf("%w: %w", ErrTimeout, context.Cause(ctx))
		}
		attrs := []any{"op", name, "duration", time.Since(start)}
		if c != nil {
			attrs = append(attrs, "app", c.req.AppPath)
		}
		if err != nil {
			msg := err.Error()
			if c != nil {
				msg = c.redact(msg)
			}
			s.log.Warn("plugin call failed", append(attrs, "error", msg)...)
			writeError(w, err, msg)
			return
		}
		s.log.Info("plugin call", attrs...)
	}
}

// receive reads the request: its JSON part, then the repository into a
// fresh private directory.
func (s *server) receive(ctx context.Context, w http.ResponseWriter, r *http.Request) (*call, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/mixed" || params["boundary"] == "" {
		return nil, fmt.Errorf("%w: want a multipart/mixed body", errBadRequest)
	}
	// The stream holds file contents (bounded below), tar headers (a few
	// blocks per entry) and the JSON part.
	limit := s.opts.MaxRepoSize + int64(s.opts.MaxRepoFiles)*2048 + maxRequestMeta + 1<<20
	body := http.MaxBytesReader(w, r.Body, limit)
	mr := multipart.NewReader(body, params["boundary"])

	part, err := mr.NextPart()
	if err != nil {
		return nil, fmt.Errorf("%w: read request: %w", errBadRequest, err)
	}
	meta, err := io.ReadAll(io.LimitReader(part, maxRequestMeta+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read request: %w", errBadRequest, err)
	}
	if len(meta) > maxRequestMeta {
		return nil, fmt.Errorf("request larger than %d bytes: %w", maxRequestMeta, render.ErrTooLarge)
	}
	c := &call{}
	if err := json.Unmarshal(meta, &c.req); err != nil {
		return nil, fmt.Errorf("%w: decode request: %w", errBadRequest, err)
	}
	appPath := path.Clean(strings.TrimPrefix(c.req.AppPath, "./"))
	if c.req.AppPath == "" {
		appPath = "."
	}
	if appPath != "." && !filepath.IsLocal(appPath) {
		return nil, fmt.Errorf("app path %q: %w", c.req.AppPath, render.ErrOutsideRoot)
	}
	c.req.AppPath = appPath

	c.workDir, err = os.MkdirTemp(s.opts.WorkDir, "cmp-")
	if err != nil {
		return nil, fmt.Errorf("create work directory: %w", render.Bare(err))
	}
	if real, err := filepath.EvalSymlinks(c.workDir); err == nil {
		c.workDir = real // so redact finds the paths commands see
	}
	c.repoDir = filepath.Join(c.workDir, "repo")
	home := filepath.Join(c.workDir, "home")
	for _, d := range []string{c.repoDir, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return c, fmt.Errorf("create work directory: %w", render.Bare(err))
		}
	}

	part, err = mr.NextPart()
	if err != nil {
		return c, fmt.Errorf("%w: read repository: %w", errBadRequest, err)
	}
	err = extractRepoTar(ctx, part, c.repoDir, extractLimits{
		maxBytes:         s.opts.MaxRepoSize,
		maxEntries:       s.opts.MaxRepoFiles,
		preserveFileMode: s.cfg.Spec.PreserveFileMode,
	})
	if err != nil {
		return c, err
	}
	// Read the body to its end, so the server notices when the client
	// goes away while the commands run, and cancels ctx.
	if _, err := io.Copy(io.Discard, body); err != nil {
		return c, fmt.Errorf("%w: read request: %w", errBadRequest, err)
	}

	c.appDir, err = render.ResolveInRoot(c.repoDir, filepath.FromSlash(appPath))
	if err != nil {
		return c, fmt.Errorf("app path: %w", err)
	}
	if fi, err := os.Stat(c.appDir); err != nil || !fi.IsDir() {
		return c, fmt.Errorf("%w: app path %q is not a directory of the repository", errBadRequest, appPath)
	}

	c.env, err = envSpec{
		path:       os.Getenv("PATH"),
		home:       home,
		passed:     passEnv(s.opts.PassEnv),
		build:      c.req.BuildEnv,
		user:       c.req.Env,
		parameters: c.req.Parameters,
	}.environ()
	if err != nil {
		return c, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	return c, nil
}

// cleanup removes a call's directory, making directories a command left
// unwritable writable first.
func (s *server) cleanup(dir string) {
	if err := os.RemoveAll(dir); err == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700) //nolint:gosec // a directory; it needs x to be removed
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		s.log.Error("remove work directory", "error", err)
	}
}

func (s *server) generate(ctx context.Context, w http.ResponseWriter, c *call) error {
	if init := s.cfg.Spec.Init; init.IsSet() {
		if _, err := runCommand(ctx, init, c.appDir, c.env, output{}, c.redact); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	maxOut := s.opts.MaxOutputSize
	if c.req.MaxOutput > 0 && c.req.MaxOutput < maxOut {
		maxOut = c.req.MaxOutput
	}
	out, err := runCommand(ctx, &s.cfg.Spec.Generate, c.appDir, c.env, output{max: maxOut, kill: true}, c.redact)
	if err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	w.Header().Set("Content-Type", contentTypeYAML)
	_, _ = w.Write(out)
	return nil
}

func (s *server) discover(ctx context.Context, w http.ResponseWriter, c *call) error {
	ok, err := s.match(ctx, c)
	if err != nil {
		return err
	}
	writeJSON(w, discoverResponse{Match: ok})
	return nil
}

// match applies the first discovery rule set: fileName, find.glob (both
// relative to the app directory), or find.command (run in the repository
// root; it claims the app by exiting 0 with output).
func (s *server) match(ctx context.Context, c *call) (bool, error) {
	d := s.cfg.Spec.Discover
	switch {
	case !d.Enabled():
		return false, nil
	case d.FileName != "":
		matches, err := filepath.Glob(filepath.Join(c.appDir, d.FileName))
		if err != nil {
			return false, fmt.Errorf("discover.fileName %q: %w", d.FileName, err)
		}
		return len(matches) > 0, nil
	case d.Find.Glob != "":
		return matchDoubleStar(ctx, c.appDir, d.Find.Glob)
	default:
		out, err := runCommand(ctx, &d.Find.Command, c.repoDir, c.env, output{max: maxFindOutput}, c.redact)
		if errors.Is(err, ErrCommandFailed) {
			s.log.Debug("discover command did not claim the app", "error", err)
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("discover.find.command: %w", err)
		}
		return strings.TrimSpace(string(out)) != "", nil
	}
}

func (s *server) parameters(ctx context.Context, w http.ResponseWriter, c *call) error {
	announced := []ParameterAnnouncement{}
	p := s.cfg.Spec.Parameters
	if p != nil {
		announced = append(announced, p.Static...)
	}
	if p != nil && p.Dynamic.IsSet() {
		out, err := runCommand(ctx, p.Dynamic, c.appDir, c.env, output{max: maxDynamicParams, kill: true}, c.redact)
		if err != nil {
			return fmt.Errorf("parameters.dynamic: %w", err)
		}
		var dynamic []ParameterAnnouncement
		if err := json.Unmarshal(out, &dynamic); err != nil {
			return fmt.Errorf("%w: parameters.dynamic printed no JSON list of parameters: %w", ErrCommandFailed, err)
		}
		announced = append(announced, dynamic...)
	}
	writeJSON(w, announced)
	return nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", contentTypeJSON)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with the status and code err's kind calls for, and
// msg, err's text with the server's directories hidden.
func writeError(w http.ResponseWriter, err error, msg string) {
	status, code := http.StatusInternalServerError, codeInternal
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, render.ErrTooLarge), errors.Is(err, errOutputTooLarge), errors.As(err, &mbe):
		status, code = http.StatusRequestEntityTooLarge, codeTooLarge
	case errors.Is(err, ErrTimeout):
		status, code = http.StatusGatewayTimeout, codeTimeout
	case errors.Is(err, ErrCommandFailed):
		status, code = http.StatusUnprocessableEntity, codeCommandFailed
	case errors.Is(err, errNoMatch):
		status, code = http.StatusConflict, codeNoMatch
	case errors.Is(err, render.ErrOutsideRoot):
		status, code = http.StatusBadRequest, codeOutsideRoot
	case errors.Is(err, errBadRequest), errors.Is(err, errUnsafeArchive):
		status, code = http.StatusBadRequest, codeBadRequest
	}
	w.Header().Set("Content-Type", contentTypeJSON)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(wireError{Code: code, Message: msg})
}
