package remote

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/graphcd/graphcd/internal/tracing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// CACert (PEM) is the only trust anchor when set: the CA that signed
	// the server's certificate, or the server's self-signed certificate
	// itself. Else the system roots are used.
	CACert []byte
	// ServerName overrides the name the server certificate is verified
	// against (default: the host of the address).
	ServerName string
	// Insecure skips verification of the server's certificate. The
	// connection is still encrypted, but not authenticated: only when the
	// operator asks for it.
	Insecure bool
	// ClientCert and ClientKey (PEM) authenticate the client to a server
	// that requires mutual TLS.
	ClientCert, ClientKey []byte
	// Plaintext connects without TLS. Requests carrying repository
	// credentials are then refused before anything is sent.
	Plaintext bool
	// MaxMessageSize bounds one request and one response in bytes
	// (default DefaultMaxMessageSize).
	MaxMessageSize int
}

// Client calls a remote repo server. It implements reposerver.Service and
// is safe for concurrent use.
type Client struct {
	conn      *grpc.ClientConn
	addr      string
	plaintext bool
	refreshed *invalidations
}

var _ reposerver.Service = (*Client)(nil)

// serviceConfig balances calls over every address the name resolves to
// (a headless Service of repo-server replicas) and retries calls that
// never reached a server; every RepoServer method only reads.
const serviceConfig = `{
  "loadBalancingConfig": [{"round_robin": {}}],
  "methodConfig": [{
    "name": [{"service": "` + ServiceName + `"}],
    "retryPolicy": {
      "maxAttempts": 3,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`

// Keepalive of the connections to repo servers. A server that stops
// answering on an open connection (hung, paused, or its node gone without
// closing it) would hold every call sent to it for ever: the client pings
// a connection that has been silent for keepaliveTime and closes it when
// the ping is not answered within keepaliveTimeout, which fails the calls
// on it as UNAVAILABLE before they got an answer, so they are retried on
// another replica (see serviceConfig). The server permits pings that
// often (see NewServer).
const (
	keepaliveTime    = 10 * time.Second
	keepaliveTimeout = 5 * time.Second
)

// Dial returns a Client for the repo server at addr ("host:port", or any
// gRPC target such as "dns:///repo-server:8081"). It connects lazily, so a
// server that starts later is found; Check reports whether it answers.
func Dial(addr string, opts ClientOptions) (*Client, error) {
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	dopts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(opts.MaxMessageSize), grpc.MaxCallSendMsgSize(opts.MaxMessageSize)),
		grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true}),
	}
	if opts.Plaintext {
		dopts = append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	} else {
		cfg, err := clientTLS(opts, targetHost(addr))
		if err != nil {
			return nil, fmt.Errorf("repo server client: %w", err)
		}
		dopts = append(dopts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	}
	if h := tracing.GRPCClientHandler(); h != nil {
		dopts = append(dopts, grpc.WithStatsHandler(h))
	}
	conn, err := grpc.NewClient(addr, dopts...)
	if err != nil {
		return nil, fmt.Errorf("repo server client for %s: %w", addr, err)
	}
	return &Client{conn: conn, addr: addr, plaintext: opts.Plaintext, refreshed: newInvalidations()}, nil
}

// targetHost extracts the host of a gRPC target for certificate
// verification: "dns:///repo:8081" and "repo:8081" give "repo".
func targetHost(target string) string {
	for _, scheme := range []string{"dns:///", "passthrough:///", "dns:"} {
		if len(target) > len(scheme) && target[:len(scheme)] == scheme {
			target = target[len(scheme):]
			break
		}
	}
	if host, _, err := net.SplitHostPort(target); err == nil {
		return host
	}
	return target
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Check asks the server's health service whether the RepoServer service is
// serving.
func (c *Client) Check(ctx context.Context) error {
	res, err := healthpb.NewHealthClient(c.conn).Check(ctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil {
		return fromStatus(err, c.addr)
	}
	if s := res.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return &Error{st: status.New(codes.Unavailable, s.String()), msg: fmt.Sprintf("repo server %s: %s", c.addr, s)}
	}
	return nil
}

// requestCredentials returns the first credentials req carries, of its
// repository, a Helm repository, a ref source or a remote base's
// repository, or nil when it carries none.
func requestCredentials(req reposerver.ManifestRequest) *reposerver.Credentials {
	if req.Repo.Credentials != nil {
		return req.Repo.Credentials
	}
	for _, r := range req.HelmRepos {
		if r.Credentials != nil {
			return r.Credentials
		}
	}
	for _, r := range req.RefSources {
		if r.Repo.Credentials != nil {
			return r.Repo.Credentials
		}
	}
	for _, r := range req.Repos {
		if r.Credentials != nil {
			return r.Credentials
		}
	}
	return nil
}

// invoke calls method with the JSON codec, refusing credentials on a
// plaintext connection before anything is sent, and stamping the request
// with the invalidations of its repositories.
func (c *Client) invoke(ctx context.Context, method string, creds *reposerver.Credentials, req, resp any) error {
	if creds != nil && c.plaintext {
		return fmt.Errorf("repo server %s: %w", c.addr, errCredentialsWithoutTLS)
	}
	ctx = c.refreshed.stamp(ctx, req)
	return fromStatus(c.conn.Invoke(ctx, method, req, resp, grpc.ForceCodec(jsonCodec{})), c.addr)
}

// GenerateManifests implements reposerver.Service.
func (c *Client) GenerateManifests(ctx context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error) {
	res := &reposerver.ManifestResponse{}
	if err := c.invoke(ctx, MethodGenerateManifests, requestCredentials(req), &req, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ResolveRevision implements reposerver.Service.
func (c *Client) ResolveRevision(ctx context.Context, repo reposerver.Repository, revision string) (string, error) {
	var res revisionResponse
	if err := c.invoke(ctx, MethodResolveRevision, repo.Credentials, &repoRequest{Repo: repo, Revision: revision}, &res); err != nil {
		return "", err
	}
	return res.Revision, nil
}

// ListRefs implements reposerver.Service.
func (c *Client) ListRefs(ctx context.Context, repo reposerver.Repository) (git.Refs, error) {
	var res git.Refs
	if err := c.invoke(ctx, MethodListRefs, repo.Credentials, &repoRequest{Repo: repo}, &res); err != nil {
		return git.Refs{}, err
	}
	return res, nil
}

// GetAppDetails implements reposerver.Service.
func (c *Client) GetAppDetails(ctx context.Context, req reposerver.ManifestRequest) (*reposerver.AppDetails, error) {
	res := &reposerver.AppDetails{}
	if err := c.invoke(ctx, MethodGetAppDetails, requestCredentials(req), &req, res); err != nil {
		return nil, err
	}
	return res, nil
}

// TestRepository implements reposerver.Service.
func (c *Client) TestRepository(ctx context.Context, repo reposerver.Repository) error {
	return c.invoke(ctx, MethodTestRepository, repo.Credentials, &repoRequest{Repo: repo}, &emptyMessage{})
}

// ListCommits implements reposerver.Service.
func (c *Client) ListCommits(ctx context.Context, repo reposerver.Repository, revision string, limit int) ([]reposerver.Commit, error) {
	var res []reposerver.Commit
	if err := c.invoke(ctx, MethodListCommits, repo.Credentials, &listCommitsRequest{Repo: repo, Revision: revision, Limit: limit}, &res); err != nil {
		return nil, err
	}
	if res == nil {
		res = []reposerver.Commit{}
	}
	return res, nil
}

// MatchTree implements reposerver.Service.
func (c *Client) MatchTree(ctx context.Context, repo reposerver.Repository, revision string, req gittree.Request) (*gittree.Result, error) {
	var res gittree.Result
	if err := c.invoke(ctx, MethodMatchTree, repo.Credentials, &matchTreeRequest{Repo: repo, Revision: revision, Request: req}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// InvalidateRevision makes every repo-server replica forget the resolved
// revisions of repoURL (a refresh or a webhook) before it answers this
// client's next call naming the repository, so that call sees new
// commits. See invalidate.go.
func (c *Client) InvalidateRevision(repoURL string) { c.refreshed.add(repoURL) }
