package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/redismetrics"
	"github.com/graphcd/graphcd/internal/selfsigned"
	"github.com/graphcd/graphcd/internal/version"
	"github.com/graphcd/graphcd/reposerver/cache"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/remote"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/plugin"
)

// Defaults of `graphcd repo-server`.
const (
	defaultRepoServerListen   = "127.0.0.1:8081"
	defaultMemoryCacheBytes   = 256 << 20
	defaultRepoServerShutdown = 30 * time.Second
	redisManifestPrefix       = "graphcd|manifests|"
	cacheSecretBytes          = 32
	redisPingTimeout          = 5 * time.Second
)

// repoServerOptions are the flags of `graphcd repo-server`.
type repoServerOptions struct {
	listen          string
	workDir         string
	tlsCert, tlsKey string
	tlsClientCA     string
	plaintext       bool
	maxMessageSize  int
	redisAddr       string
	redisPassword   string
	cacheSecretFile string
	cacheTTL        time.Duration
	renderTimeout   time.Duration
	shutdownTimeout time.Duration
	limits          render.Limits
	pluginSocketDir string
	pluginTimeout   time.Duration
	render          renderworker.Options
	tracing         tracingOptions
	metrics         metricsListener
	profile         profileListener
}

func newRepoServerCmd(root *rootOptions) *cobra.Command {
	o := &repoServerOptions{}
	c := &cobra.Command{
		Use:   "repo-server",
		Short: "Serve the repository server (render manifests from Git and Helm) over gRPC",
		Long: `Run a repository server worker: it checks out Git repositories, pulls
charts, renders manifests and caches them, and serves this over gRPC for
` + "`graphcd server --repo-server-addr`" + `.

TLS is on by default: without --tls-cert/--tls-key a self-signed certificate
is generated at start (its SHA-256 fingerprint is logged). --tls-client-ca
requires client certificates signed by that CA (mutual TLS). The standard
gRPC health service answers for probes.

Rendered manifests are cached in memory, or in Redis with --redis so that
replicas share them. Cache entries are signed with the key in
--cache-secret-file; without it a random key is generated at start and
entries are only readable by this process.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runRepoServer(c.Context(), c, root, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.listen, "listen", defaultRepoServerListen, "address to serve gRPC on")
	f.StringVar(&o.workDir, "work-dir", "", "directory for Git working copies and charts (default: a temporary directory removed at exit)")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM server certificate file (default: a generated self-signed certificate)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	f.StringVar(&o.tlsClientCA, "tls-client-ca", "", "PEM CA file: require client certificates it signed (mutual TLS)")
	f.BoolVar(&o.plaintext, "plaintext", false, "serve without TLS (only behind a network that encrypts); requests with repository credentials are refused")
	f.IntVar(&o.maxMessageSize, "max-message-size", remote.DefaultMaxMessageSize, "largest gRPC request or response in bytes")
	f.StringVar(&o.redisAddr, "redis", "", "Redis address host:port (or redis:// URL) for a manifest cache shared by replicas (default: in memory)")
	f.StringVar(&o.redisPassword, "redis-password", "", "Redis password")
	f.StringVar(&o.cacheSecretFile, "cache-secret-file", "", "file holding the key (at least 32 bytes) cache entries are signed with")
	f.DurationVar(&o.cacheTTL, "cache-ttl", cache.DefaultTTL, "how long rendered manifests are cached")
	f.DurationVar(&o.renderTimeout, "render-timeout", inproc.DefaultRenderTimeout, "how long one render may take")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", defaultRepoServerShutdown, "how long to wait for running calls on SIGINT/SIGTERM")
	f.Int64Var(&o.limits.MaxManifestSize, "max-manifest-size", render.DefaultMaxManifestSize, "largest single rendered manifest, in bytes")
	f.Int64Var(&o.limits.MaxCombinedSize, "max-combined-manifests-size", render.DefaultMaxCombinedSize, "largest total of one render's manifests, in bytes")
	f.StringVar(&o.pluginSocketDir, "plugin-socket-dir", "", "socket directory of `graphcd cmp-server` sidecars (enables config-management plugins)")
	f.DurationVar(&o.pluginTimeout, "plugin-timeout", plugin.DefaultClientTimeout, "how long one plugin call may take")
	o.render.AddFlags(f)
	o.tracing.addFlags(f)
	o.metrics.addFlags(c, defaultRepoServerMetricsListen, true)
	o.profile.addFlags(c)
	return c
}

func runRepoServer(ctx context.Context, c *cobra.Command, root *rootOptions, o *repoServerOptions) error {
	if err := o.validate(ctx, c); err != nil {
		return err
	}
	log := root.log
	flushTraces, err := o.tracing.start(ctx, c, "graphcd-repo-server", log)
	if err != nil {
		return err
	}
	defer flushTraces()
	if err := o.profile.serve(ctx, c, log); err != nil {
		return err
	}
	sopts, err := o.serverOptions(c, log)
	if err != nil {
		return err
	}
	workDir, cleanup, err := o.prepareWorkDir()
	if err != nil {
		return err
	}
	defer cleanup()

	manifests, closeCache, err := o.newCache(ctx, c, log)
	if err != nil {
		return err
	}
	defer closeCache()
	worker, err := o.render.Worker(c)
	if err != nil {
		return err
	}
	local, err := inproc.New(inproc.Options{
		WorkDir: workDir, Cache: manifests, RenderTimeout: o.renderTimeout, Logger: log,
		Limits: o.limits, PluginSocketDir: o.pluginSocketDir, PluginTimeout: o.pluginTimeout,
		Worker: worker,
	})
	if err != nil {
		return err
	}
	// SIGTERM stops the renders in progress at once (their callers get an
	// error) rather than letting shutdown wait for them.
	defer context.AfterFunc(ctx, local.Close)()
	defer local.Close()
	sopts.Memory = memoryGuard(ctx, log)
	srv, err := remote.NewServer(local, sopts)
	if err != nil {
		return err
	}
	if err := o.metrics.serve(ctx, c, log, slices.Concat(inproc.Collectors(), redismetrics.Collectors(), memguard.Collectors())...); err != nil {
		return err
	}
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.listen)
	if err != nil {
		return fmt.Errorf("%s: %w", command.FlagOrigin(c, "listen"), err)
	}

	build := version.Get()
	attrs := []any{"addr", lis.Addr().String(), "version", build.Version, "tls", tlsMode(o), "mtls", o.tlsClientCA != "", "work-dir", workDir}
	if o.tlsCert == "" && !o.plaintext {
		if fp, err := selfsigned.Fingerprint(srv.CertificatePEM()); err == nil {
			attrs = append(attrs, "certificate-sha256", fp)
		}
	}
	log.Info("repo server serving", attrs...)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("repo server stopping", "timeout", o.shutdownTimeout)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.shutdownTimeout)
	defer cancel()
	srv.Shutdown(stopCtx)
	return <-served
}

func (o *repoServerOptions) validate(ctx context.Context, c *cobra.Command) error {
	if err := checkListen(ctx, o.listen); err != nil {
		return fmt.Errorf("%s: %w", command.FlagOrigin(c, "listen"), err)
	}
	if err := o.metrics.validate(ctx, c); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"cache-ttl", o.cacheTTL}, {"render-timeout", o.renderTimeout}, {"shutdown-timeout", o.shutdownTimeout}, {"plugin-timeout", o.pluginTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s: must be positive, got %s", command.FlagOrigin(c, d.name), d.v)
		}
	}
	if o.limits.MaxManifestSize <= 0 || o.limits.MaxCombinedSize <= 0 {
		return fmt.Errorf("%s and %s must be positive", command.FlagOrigin(c, "max-manifest-size"), command.FlagOrigin(c, "max-combined-manifests-size"))
	}
	if o.maxMessageSize <= 0 {
		return fmt.Errorf("%s: must be positive, got %d", command.FlagOrigin(c, "max-message-size"), o.maxMessageSize)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return fmt.Errorf("%s and %s must be given together", command.FlagOrigin(c, "tls-cert"), command.FlagOrigin(c, "tls-key"))
	}
	if o.plaintext && (o.tlsCert != "" || o.tlsClientCA != "") {
		return fmt.Errorf("%s conflicts with %s/%s", command.FlagOrigin(c, "plaintext"), command.FlagOrigin(c, "tls-cert"), command.FlagOrigin(c, "tls-client-ca"))
	}
	return nil
}

func tlsMode(o *repoServerOptions) string {
	switch {
	case o.plaintext:
		return "off"
	case o.tlsCert == "":
		return "self-signed"
	default:
		return "on"
	}
}

// serverOptions reads the TLS files named by the flags.
func (o *repoServerOptions) serverOptions(c *cobra.Command, log *slog.Logger) (remote.ServerOptions, error) {
	sopts := remote.ServerOptions{Plaintext: o.plaintext, MaxMessageSize: o.maxMessageSize, Logger: log}
	if host, _, err := net.SplitHostPort(o.listen); err == nil && host != "" {
		sopts.Hosts = []string{host}
	}
	for _, f := range []struct {
		flag, path string
		dst        *[]byte
	}{
		{"tls-cert", o.tlsCert, &sopts.TLSCert},
		{"tls-key", o.tlsKey, &sopts.TLSKey},
		{"tls-client-ca", o.tlsClientCA, &sopts.ClientCA},
	} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return sopts, fmt.Errorf("%s: %w", command.FlagOrigin(c, f.flag), err)
		}
		*f.dst = b
	}
	return sopts, nil
}

// prepareWorkDir returns the work directory, creating a temporary one
// (removed by cleanup) when --work-dir is not given.
func (o *repoServerOptions) prepareWorkDir() (string, func(), error) {
	if o.workDir != "" {
		if err := os.MkdirAll(o.workDir, 0o700); err != nil {
			return "", nil, fmt.Errorf("work directory: %w", err)
		}
		return o.workDir, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "graphcd-repo-server-")
	if err != nil {
		return "", nil, fmt.Errorf("work directory: %w", err)
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// newCache returns the manifest cache: Redis with --redis, else memory.
func (o *repoServerOptions) newCache(ctx context.Context, c *cobra.Command, log *slog.Logger) (*cache.Cache, func(), error) {
	secret, err := o.cacheSecret(c, log)
	if err != nil {
		return nil, nil, err
	}
	copts := cache.Options{Secret: secret, TTL: o.cacheTTL, Logger: log}
	if o.redisAddr == "" {
		mc, err := cache.New(cache.NewMemory(defaultMemoryCacheBytes), copts)
		return mc, func() {}, err
	}
	ropts, err := redisOptions(o.redisAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "redis"), err)
	}
	if o.redisPassword != "" {
		ropts.Password = o.redisPassword
	}
	client := redis.NewClient(ropts)
	redismetrics.Instrument(client, redismetrics.RepoServer)
	closeClient := func() { _ = client.Close() }
	pingCtx, cancel := context.WithTimeout(ctx, redisPingTimeout)
	defer cancel()
	// Redis is a cache: a server that is down now is logged, not fatal;
	// renders go on without it until it is back.
	if err := client.Ping(pingCtx).Err(); err != nil {
		log.Warn("Redis not reachable; manifests are not cached until it is", "addr", ropts.Addr, "err", err)
	} else {
		log.Info("manifest cache in Redis", "addr", ropts.Addr)
	}
	rc, err := cache.New(cache.NewRedis(client, redisManifestPrefix), copts)
	if err != nil {
		closeClient()
		return nil, nil, err
	}
	return rc, closeClient, nil
}

// redisOptions parses --redis: host:port, or a redis:// or rediss:// URL
// (whose password is never logged: only Addr is).
func redisOptions(addr string) (*redis.Options, error) {
	if !strings.Contains(addr, "://") {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("invalid Redis address %q: want host:port or a redis:// URL", addr)
		}
		return &redis.Options{Addr: addr}, nil
	}
	ropts, err := redis.ParseURL(addr)
	if err != nil {
		// The parse error may quote the URL, password included.
		return nil, errors.New("invalid Redis URL")
	}
	return ropts, nil
}

// cacheSecret reads --cache-secret-file or generates a random key.
func (o *repoServerOptions) cacheSecret(c *cobra.Command, log *slog.Logger) ([]byte, error) {
	if o.cacheSecretFile == "" {
		secret := make([]byte, cacheSecretBytes)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("generate cache secret: %w", err)
		}
		msg := "no --cache-secret-file: cache entries are signed with a key generated at start, so they are per process and lost on restart"
		if o.redisAddr != "" {
			log.Warn(msg + "; replicas sharing Redis do not share entries")
		} else {
			log.Info(msg)
		}
		return secret, nil
	}
	b, err := os.ReadFile(o.cacheSecretFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "cache-secret-file"), err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < cacheSecretBytes {
		return nil, fmt.Errorf("%s: the key must be at least %d bytes, got %d", command.FlagOrigin(c, "cache-secret-file"), cacheSecretBytes, len(b))
	}
	return b, nil
}
