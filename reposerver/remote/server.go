package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/tracing"
	"github.com/graphcd/graphcd/reposerver"
)

// ServerOptions configure a Server.
type ServerOptions struct {
	// TLSCert and TLSKey (PEM) are the serving certificate; when both are
	// empty a self-signed certificate is generated for Hosts.
	TLSCert, TLSKey []byte
	// Hosts are extra names and addresses for a generated certificate.
	Hosts []string
	// ClientCA (PEM), when set, makes the server require client
	// certificates signed by it (mutual TLS).
	ClientCA []byte
	// Plaintext serves without TLS, for a network that already encrypts
	// (a service mesh). Requests carrying repository credentials are then
	// refused.
	Plaintext bool
	// MaxMessageSize bounds one request and one response in bytes
	// (default DefaultMaxMessageSize). A render whose response would be
	// larger fails with ResourceExhausted.
	MaxMessageSize int
	// Logger receives a debug line per call and an error per recovered
	// panic.
	Logger *slog.Logger
	// Memory admits renders: under memory pressure one runs at a time,
	// and one that waited MemoryWait (DefaultMemoryWait when zero) fails
	// with ResourceExhausted (the caller retries later). Nil admits every
	// render at once.
	Memory     *memguard.Guard
	MemoryWait time.Duration
}

// DefaultMemoryWait is how long a render waits for memory before it is
// refused.
const DefaultMemoryWait = 20 * time.Second

// rendering are the methods that render, admitted through
// ServerOptions.Memory.
var rendering = map[string]bool{
	"/" + ServiceName + "/GenerateManifests": true,
	"/" + ServiceName + "/GetAppDetails":     true,
}

// Server serves a reposerver.Service and the gRPC health service.
type Server struct {
	grpc   *grpc.Server
	health *health.Server
	cert   []byte
	log    *slog.Logger
	// invalidator is svc when it has a revision cache, with the
	// clients' invalidations applied to it.
	invalidator revisionInvalidator
	applied     applied
	memory      *memguard.Guard
	memoryWait  time.Duration
}

// NewServer returns a Server for svc. It does not listen yet; see Serve.
func NewServer(svc reposerver.Service, opts ServerOptions) (*Server, error) {
	if svc == nil {
		return nil, errors.New("repo server: nil Service")
	}
	if opts.MaxMessageSize <= 0 {
		opts.MaxMessageSize = DefaultMaxMessageSize
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.MemoryWait <= 0 {
		opts.MemoryWait = DefaultMemoryWait
	}
	s := &Server{memoryWait: opts.MemoryWait, health: health.NewServer(), log: opts.Logger, applied: applied{seen: map[appliedKey]uint64{}}, memory: opts.Memory}
	s.invalidator, _ = svc.(revisionInvalidator)
	sopts := []grpc.ServerOption{
		grpc.ForceServerCodec(wireCodec{}),
		grpc.MaxRecvMsgSize(opts.MaxMessageSize),
		grpc.MaxSendMsgSize(opts.MaxMessageSize),
		grpc.ChainUnaryInterceptor(s.intercept),
		// Clients ping every keepaliveTime to find a hung server; refusing
		// those pings (the default allows one per 5 minutes) would close
		// their connections.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveTime / 2, PermitWithoutStream: true}),
	}
	if !opts.Plaintext {
		cfg, cert, err := serverTLS(opts)
		if err != nil {
			return nil, fmt.Errorf("repo server: %w", err)
		}
		s.cert = cert
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	if h := tracing.GRPCServerHandler(); h != nil {
		sopts = append(sopts, grpc.StatsHandler(h))
	}
	s.grpc = grpc.NewServer(sopts...)
	s.grpc.RegisterService(&serviceDesc, svc)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// CertificatePEM returns the serving certificate (the generated one when
// none was given), or nil for a plaintext server. Clients trust it with
// ClientOptions.CACert.
func (s *Server) CertificatePEM() []byte { return s.cert }

// Serve accepts connections on lis until Shutdown or Stop. It returns nil
// after a Shutdown or Stop.
func (s *Server) Serve(lis net.Listener) error {
	if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("repo server: serve: %w", err)
	}
	return nil
}

// Shutdown reports NOT_SERVING to health checks, stops accepting calls and
// waits for running calls to finish; when ctx ends first, it closes every
// connection at once.
func (s *Server) Shutdown(ctx context.Context) {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
}

// Stop closes every connection and listener at once.
func (s *Server) Stop() {
	s.health.Shutdown()
	s.grpc.Stop()
}

// intercept applies the invalidations the call carries, recovers panics
// of a handler (Internal, with a generic message) and logs each call
// without its request.
func (s *Server) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "repo server: panic in handler", "method", info.FullMethod, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp, err = nil, status.Error(codes.Internal, "internal error in the repo server")
		}
		s.log.DebugContext(ctx, "repo server call", "method", info.FullMethod, "code", status.Code(err).String(), "duration", time.Since(start))
	}()
	if s.invalidator != nil {
		s.applied.catchUp(ctx, req, s.invalidator)
	}
	if rendering[info.FullMethod] {
		release, err := s.admit(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	return handler(ctx, req)
}

// admit waits up to ServerOptions.MemoryWait for memory to render.
func (s *Server) admit(ctx context.Context) (func(), error) {
	wait, cancel := context.WithTimeoutCause(ctx, s.memoryWait, errMemoryWait)
	defer cancel()
	release, err := s.memory.Admit(wait)
	if errors.Is(err, errMemoryWait) {
		st := s.memory.State()
		return nil, status.Errorf(codes.ResourceExhausted, "repository server under memory pressure (live heap %d MiB of a %d MiB limit): render refused after waiting %s; it is retried",
			st.Live>>20, st.Limit>>20, s.memoryWait)
	}
	if err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return release, nil
}

var errMemoryWait = errors.New("waited too long for memory")

// overTLS reports whether the call came over a TLS connection.
func overTLS(ctx context.Context) bool {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return false
	}
	_, ok = p.AuthInfo.(credentials.TLSInfo)
	return ok
}

// errCredentialsWithoutTLS refuses repository credentials on a plaintext
// connection, on either side.
var errCredentialsWithoutTLS = errors.New("repository credentials are only sent over TLS; this connection is plaintext")

// checkCredentials refuses a request that carries credentials over a
// plaintext connection.
func checkCredentials(ctx context.Context, creds *reposerver.Credentials) error {
	if creds != nil && !overTLS(ctx) {
		return status.Error(codes.FailedPrecondition, errCredentialsWithoutTLS.Error())
	}
	return nil
}

// unaryMethod adapts one Service method to a grpc.MethodDesc: decode the
// request, refuse credentials without TLS, call, map the error.
func unaryMethod[Req any](name string, creds func(*Req) *reposerver.Credentials, call func(context.Context, reposerver.Service, *Req) (any, error)) grpc.MethodDesc {
	full := "/" + ServiceName + "/" + name
	return grpc.MethodDesc{
		MethodName: name,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := new(Req)
			if err := dec(req); err != nil {
				return nil, status.Errorf(codes.InvalidArgument, "decode %s request: %v", name, err)
			}
			handle := func(ctx context.Context, r any) (any, error) {
				req := r.(*Req)
				if err := checkCredentials(ctx, creds(req)); err != nil {
					return nil, err
				}
				resp, err := call(ctx, srv.(reposerver.Service), req)
				if err != nil {
					return nil, toStatus(err, creds(req))
				}
				return resp, nil
			}
			if interceptor == nil {
				return handle(ctx, req)
			}
			return interceptor(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: full}, handle)
		},
	}
}

func manifestCreds(r *reposerver.ManifestRequest) *reposerver.Credentials {
	return requestCredentials(*r)
}
func repoCreds(r *repoRequest) *reposerver.Credentials               { return r.Repo.Credentials }
func listCommitsCreds(r *listCommitsRequest) *reposerver.Credentials { return r.Repo.Credentials }
func matchTreeCreds(r *matchTreeRequest) *reposerver.Credentials     { return r.Repo.Credentials }

// revisionInvalidator is implemented by services with a revision cache
// (inproc.Local).
type revisionInvalidator interface{ InvalidateRevision(repoURL string) }

// serviceDesc declares the RepoServer service by hand, in place of code
// generated from a .proto file.
var serviceDesc = grpc.ServiceDesc{
	ServiceName: ServiceName,
	HandlerType: (*reposerver.Service)(nil),
	Methods: []grpc.MethodDesc{
		unaryMethod("GenerateManifests", manifestCreds, func(ctx context.Context, svc reposerver.Service, r *reposerver.ManifestRequest) (any, error) {
			return svc.GenerateManifests(ctx, *r)
		}),
		unaryMethod("ResolveRevision", repoCreds, func(ctx context.Context, svc reposerver.Service, r *repoRequest) (any, error) {
			rev, err := svc.ResolveRevision(ctx, r.Repo, r.Revision)
			if err != nil {
				return nil, err
			}
			return &revisionResponse{Revision: rev}, nil
		}),
		unaryMethod("ListRefs", repoCreds, func(ctx context.Context, svc reposerver.Service, r *repoRequest) (any, error) {
			refs, err := svc.ListRefs(ctx, r.Repo)
			if err != nil {
				return nil, err
			}
			return &refs, nil
		}),
		unaryMethod("GetAppDetails", manifestCreds, func(ctx context.Context, svc reposerver.Service, r *reposerver.ManifestRequest) (any, error) {
			return svc.GetAppDetails(ctx, *r)
		}),
		unaryMethod("TestRepository", repoCreds, func(ctx context.Context, svc reposerver.Service, r *repoRequest) (any, error) {
			if err := svc.TestRepository(ctx, r.Repo); err != nil {
				return nil, err
			}
			return &emptyMessage{}, nil
		}),
		unaryMethod("ListCommits", listCommitsCreds, func(ctx context.Context, svc reposerver.Service, r *listCommitsRequest) (any, error) {
			commits, err := svc.ListCommits(ctx, r.Repo, r.Revision, r.Limit)
			if err != nil {
				return nil, err
			}
			return &commits, nil
		}),
		unaryMethod("MatchTree", matchTreeCreds, func(ctx context.Context, svc reposerver.Service, r *matchTreeRequest) (any, error) {
			return svc.MatchTree(ctx, r.Repo, r.Revision, r.Request)
		}),
	},
	Metadata: "graphcd/reposerver/v1 (hand-written, JSON codec)",
}
