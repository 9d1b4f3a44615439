package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/reposerver/render"
)

// DefaultClientTimeout bounds one Render or Parameters call when
// ClientOptions.Timeout is zero.
const DefaultClientTimeout = 2 * time.Minute

// maxErrorBody bounds an error answer read from a plugin.
const maxErrorBody = 64 << 10

// ErrNoPlugin is wrapped when no plugin socket serves the requested name,
// or no plugin's discovery rules claim the application.
var ErrNoPlugin = errors.New("no matching config management plugin")

// ClientOptions configure Render and Parameters.
type ClientOptions struct {
	SocketDir string        // where the plugins' sockets are; DefaultSocketDir when empty
	Timeout   time.Duration // per call, discovery included; DefaultClientTimeout when zero
}

func (o ClientOptions) withDefaults() ClientOptions {
	if o.SocketDir == "" {
		o.SocketDir = DefaultSocketDir
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultClientTimeout
	}
	return o
}

// Render has a plugin generate the manifests of req.Path and decodes them
// with req.Limits. The plugin is the one named by req.Source.Plugin.Name
// (which must then also pass its own discovery rules, if it has any), or,
// when no name is given, the first plugin in lexical order of socket names
// whose discovery rules claim the application.
//
// The whole repository at req.RepoRoot, without .git, is streamed to the
// plugin; a symlink leading outside it fails the render with
// render.ErrOutsideRoot.
func Render(ctx context.Context, req render.Request, opts ClientOptions) ([]*unstructured.Unstructured, error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	meta := wireFor(req)
	meta.MaxOutput = req.Limits.WithDefaults().MaxCombinedSize

	name, out, err := callSelected(ctx, req, opts, pathGenerate, meta)
	if err != nil {
		return nil, err
	}
	objs, err := render.Decode("output of plugin "+name, out, req.Limits)
	if err != nil {
		return nil, err
	}
	return objs, nil
}

// Parameters returns the parameter announcements (static, then dynamic)
// of the plugin Render would use for req.
func Parameters(ctx context.Context, req render.Request, opts ClientOptions) ([]ParameterAnnouncement, error) {
	opts = opts.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	meta := wireFor(req)
	_, out, err := callSelected(ctx, req, opts, pathParameters, meta)
	if err != nil {
		return nil, err
	}
	var announced []ParameterAnnouncement
	if err := json.Unmarshal(out, &announced); err != nil {
		return nil, fmt.Errorf("decode parameter announcements: %w", err)
	}
	return announced, nil
}

// Discover asks the plugins in socketDir, in lexical order of their socket
// names, whether their discovery rules claim the application at appPath
// (relative to repoRoot), and returns the name of the first that does.
// Plugins without discovery rules are skipped. When none claims it, err
// joins the errors of the plugins that could not answer.
func Discover(ctx context.Context, socketDir, repoRoot, appPath string) (pluginName string, ok bool, err error) {
	socks, err := Plugins(socketDir)
	if err != nil {
		return "", false, err
	}
	meta := wireRequest{AppPath: filepath.ToSlash(appPath)}
	var errs []error
	for _, name := range socks {
		sock := filepath.Join(socketDir, name+".sock")
		info, err := pluginInfoOf(ctx, sock)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.Discovery {
			continue
		}
		body, err := post(ctx, sock, name, pathDiscover, meta, repoRoot, maxErrorBody)
		if err != nil {
			if errors.Is(err, render.ErrOutsideRoot) || ctx.Err() != nil {
				return "", false, err
			}
			errs = append(errs, err)
			continue
		}
		var resp discoverResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			errs = append(errs, fmt.Errorf("plugin %s: decode discovery answer: %w", name, err))
			continue
		}
		if resp.Match {
			return info.Name, true, nil
		}
	}
	return "", false, errors.Join(errs...)
}

// Plugins lists the names of the plugins with a socket in socketDir,
// sorted.
func Plugins(socketDir string) ([]string, error) {
	entries, err := os.ReadDir(socketDir)
	if err != nil {
		return nil, fmt.Errorf("list plugin sockets: %w", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sock")
		if ok && e.Type()&fs.ModeSocket != 0 && nameRE.MatchString(name) {
			names = append(names, name)
		}
	}
	return names, nil
}

// callSelected posts meta to the plugin req names, or to each plugin with
// discovery rules in turn until one claims the app.
func callSelected(ctx context.Context, req render.Request, opts ClientOptions, endpoint string, meta wireRequest) (string, []byte, error) {
	limit := req.Limits.WithDefaults().MaxCombinedSize
	meta.RequireMatch = true
	var name string
	if req.Source.Plugin != nil {
		name = req.Source.Plugin.Name
	}
	if name != "" {
		if !nameRE.MatchString(name) {
			return "", nil, fmt.Errorf("plugin name %q: %w", name, ErrNoPlugin)
		}
		sock := filepath.Join(opts.SocketDir, name+".sock")
		if _, err := os.Stat(sock); err != nil {
			return "", nil, fmt.Errorf("plugin %q has no socket in %s: %w", name, opts.SocketDir, ErrNoPlugin)
		}
		out, err := post(ctx, sock, name, endpoint, meta, req.RepoRoot, limit)
		if errors.Is(err, errNoMatch) {
			return "", nil, fmt.Errorf("plugin %q does not claim app path %q: %w", name, meta.AppPath, ErrNoPlugin)
		}
		return name, out, err
	}

	names, err := Plugins(opts.SocketDir)
	if err != nil {
		return "", nil, err
	}
	var errs []error
	for _, name := range names {
		sock := filepath.Join(opts.SocketDir, name+".sock")
		info, err := pluginInfoOf(ctx, sock)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.Discovery {
			continue
		}
		out, err := post(ctx, sock, name, endpoint, meta, req.RepoRoot, limit)
		if errors.Is(err, errNoMatch) {
			continue
		}
		return info.Name, out, err
	}
	errs = append([]error{fmt.Errorf("no plugin in %s claims app path %q: %w", opts.SocketDir, meta.AppPath, ErrNoPlugin)}, errs...)
	return "", nil, errors.Join(errs...)
}

// wireFor builds the request metadata: the app path and Argo CD's build
// environment (render.Request.BuildEnv), the plugin env and parameters.
func wireFor(req render.Request) wireRequest {
	appPath := filepath.ToSlash(req.Path)
	if appPath == "" {
		appPath = "."
	}
	w := wireRequest{AppPath: appPath, BuildEnv: req.BuildEnv()}
	if p := req.Source.Plugin; p != nil {
		w.Env = p.Env
		w.Parameters = p.Parameters
	}
	return w
}

// httpClient talks HTTP over the Unix socket sock, one connection per
// call.
func httpClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		DisableKeepAlives:  true,
		DisableCompression: true,
	}}
}

func pluginInfoOf(ctx context.Context, sock string) (pluginInfo, error) {
	name := strings.TrimSuffix(filepath.Base(sock), ".sock")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://plugin"+pathInfo, nil)
	if err != nil {
		return pluginInfo{}, err
	}
	resp, err := httpClient(sock).Do(req)
	if err != nil {
		return pluginInfo{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		return pluginInfo{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return pluginInfo{}, remoteErr(name, resp.StatusCode, body)
	}
	var info pluginInfo
	if err := json.Unmarshal(body, &info); err != nil {
		return pluginInfo{}, fmt.Errorf("plugin %s: decode info: %w", name, err)
	}
	return info, nil
}

// post sends meta and a tar of repoRoot to endpoint and returns the body
// of a 200 answer, at most limit bytes (more fails with
// render.ErrTooLarge).
func post(ctx context.Context, sock, name, endpoint string, meta wireRequest, repoRoot string, limit int64) ([]byte, error) {
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode plugin request: %w", err)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	written := make(chan error, 1)
	go func() {
		err := writeBody(ctx, mw, metaJSON, repoRoot)
		_ = pw.CloseWithError(err)
		written <- err
	}()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://plugin"+endpoint, pr)
	if err != nil {
		_ = pr.Close()
		if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
			return nil, errors.Join(err, werr)
		}
		return nil, err
	}
	req.Header.Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	body, status, err := do(httpClient(sock), req, limit)
	_ = pr.Close()
	werr := <-written
	if werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		// The repository could not be sent; that is the cause of
		// whatever the server said.
		return nil, fmt.Errorf("send repository to plugin %s: %w", name, werr)
	}
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("plugin %s: %w: %w", name, ErrTimeout, ctx.Err())
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, ctx.Err())
		}
		return nil, fmt.Errorf("plugin %s: %w", name, err)
	}
	if status != http.StatusOK {
		return nil, remoteErr(name, status, body)
	}
	return body, nil
}

func do(hc *http.Client, req *http.Request, limit int64) ([]byte, int, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		limit = maxErrorBody
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, 0, err
	}
	if int64(len(body)) > limit {
		if resp.StatusCode != http.StatusOK {
			body = body[:limit]
		} else {
			return nil, 0, fmt.Errorf("output larger than %d bytes: %w", limit, render.ErrTooLarge)
		}
	}
	return body, resp.StatusCode, nil
}

func writeBody(ctx context.Context, mw *multipart.Writer, meta []byte, repoRoot string) error {
	part, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {contentTypeJSON}})
	if err != nil {
		return err
	}
	if _, err := part.Write(meta); err != nil {
		return err
	}
	part, err = mw.CreatePart(textproto.MIMEHeader{"Content-Type": {contentTypeTar}})
	if err != nil {
		return err
	}
	if err := writeRepoTar(ctx, part, repoRoot); err != nil {
		return err
	}
	return mw.Close()
}

// remoteError is a plugin server's error answer.
type remoteError struct {
	plugin  string
	message string
	kind    error
}

func (e *remoteError) Error() string { return "plugin " + e.plugin + ": " + e.message }
func (e *remoteError) Unwrap() error { return e.kind }

func remoteErr(name string, status int, body []byte) error {
	var we wireError
	if err := json.Unmarshal(body, &we); err != nil || we.Message == "" {
		msg := strings.TrimSpace(string(bytes.ToValidUTF8(body, nil)))
		return fmt.Errorf("plugin %s: %s: %s", name, http.StatusText(status), msg)
	}
	var kind error
	switch we.Code {
	case codeTooLarge:
		kind = render.ErrTooLarge
	case codeTimeout:
		kind = ErrTimeout
	case codeCommandFailed:
		kind = ErrCommandFailed
	case codeNoMatch:
		kind = errNoMatch
	case codeOutsideRoot:
		kind = render.ErrOutsideRoot
	}
	return &remoteError{plugin: name, message: we.Message, kind: kind}
}
