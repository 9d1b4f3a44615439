package remote

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/selfsigned"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/gittree"
	"github.com/graphcd/graphcd/reposerver/render"
)

// scripted is a Service that answers from fields, for the transport tests
// that need exact errors and sizes; rendering itself is tested against
// inproc.Local in remote_integration_test.go.
type scripted struct {
	err      error
	res      *reposerver.ManifestResponse
	panicMsg string
	// block, when set, holds GenerateManifests until it is closed.
	block   chan struct{}
	calls   atomic.Int32
	lastReq atomic.Pointer[reposerver.ManifestRequest]
	// invalidated is the last URL InvalidateRevision was called with, and
	// invalidations how often it was called.
	invalidated   atomic.Pointer[string]
	invalidations atomic.Int32
}

func (s *scripted) GenerateManifests(_ context.Context, req reposerver.ManifestRequest) (*reposerver.ManifestResponse, error) {
	s.calls.Add(1)
	s.lastReq.Store(&req)
	if s.panicMsg != "" {
		panic(s.panicMsg)
	}
	if s.block != nil {
		<-s.block
	}
	return s.res, s.err
}

func (s *scripted) ResolveRevision(context.Context, reposerver.Repository, string) (string, error) {
	s.calls.Add(1)
	return "0123456789abcdef0123456789abcdef01234567", s.err
}

func (s *scripted) ListRefs(context.Context, reposerver.Repository) (git.Refs, error) {
	s.calls.Add(1)
	return git.Refs{Branches: []string{"main"}, Tags: []string{"v1"}}, s.err
}

func (s *scripted) GetAppDetails(context.Context, reposerver.ManifestRequest) (*reposerver.AppDetails, error) {
	s.calls.Add(1)
	return &reposerver.AppDetails{SourceType: v1alpha1.ApplicationSourceTypeKustomize, Kustomize: &reposerver.KustomizeDetails{Images: []string{"nginx:1.27"}}}, s.err
}

// scriptedCommits is what scripted.ListCommits answers.
var scriptedCommits = []reposerver.Commit{
	{
		SHA: "0123456789abcdef0123456789abcdef01234567", Author: git.Person{Name: "Ana Dev", Email: "ana@example.com"},
		Date: time.Date(2026, 3, 1, 12, 30, 0, 0, time.FixedZone("CET", 3600)), Message: "deploy: raise replicas\n\nBecause load.\n", Tags: []string{"v1.2.0"},
	},
	{SHA: "89abcdef0123456789abcdef0123456789abcdef", Author: git.Person{Name: "Bo"}, Date: time.Unix(1700000000, 0).UTC(), Message: "init"},
}

func (s *scripted) ListCommits(_ context.Context, _ reposerver.Repository, _ string, limit int) ([]reposerver.Commit, error) {
	s.calls.Add(1)
	if s.err != nil {
		return nil, s.err
	}
	return scriptedCommits[:min(limit, len(scriptedCommits))], nil
}

func (s *scripted) MatchTree(context.Context, reposerver.Repository, string, gittree.Request) (*gittree.Result, error) {
	s.calls.Add(1)
	return nil, s.err
}

func (s *scripted) InvalidateRevision(url string) {
	s.invalidated.Store(&url)
	s.invalidations.Add(1)
}

func (s *scripted) TestRepository(context.Context, reposerver.Repository) error {
	s.calls.Add(1)
	return s.err
}

// serve starts a Server for svc on a loopback port and returns its address.
func serve(t testing.TB, svc reposerver.Service, opts ServerOptions) (*Server, string) {
	t.Helper()
	srv, err := NewServer(svc, opts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, lis.Addr().String()
}

// dial returns a Client closed at the end of the test.
func dial(t testing.TB, addr string, opts ClientOptions) *Client {
	t.Helper()
	c, err := Dial(addr, opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// configMap returns a ConfigMap whose data holds size bytes.
func configMap(name string, size int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "demo", "labels": map[string]any{"app": name}},
		"data":     map[string]any{"blob": strings.Repeat("x", size)},
	}}
}

func TestRoundTrip(t *testing.T) {
	want := &reposerver.ManifestResponse{
		Manifests:  []*unstructured.Unstructured{configMap("a", 10), configMap("b", 0)},
		Revision:   "0123456789abcdef0123456789abcdef01234567",
		SourceType: v1alpha1.ApplicationSourceTypeHelm,
		Cached:     true,
	}
	svc := &scripted{res: want}
	srv, addr := serve(t, svc, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	ctx := t.Context()

	req := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: "https://git.example.com/apps.git", Credentials: &reposerver.Credentials{Username: "u", Password: "secret-pw", SSHPrivateKey: []byte("key")}},
		Source: v1alpha1.ApplicationSource{
			RepoURL: "https://git.example.com/apps.git", Path: "apps/web", TargetRevision: "main",
			Helm: &v1alpha1.ApplicationSourceHelm{ValueFiles: []string{"values-prod.yaml"}, Parameters: []v1alpha1.HelmParameter{{Name: "replicas", Value: "3"}}},
		},
		Revision: "v1.2.3", AppName: "web", Namespace: "demo", KubeVersion: "1.37.2", APIVersions: []string{"apps/v1"}, NoCache: true,
	}
	got, err := c.GenerateManifests(ctx, req)
	if err != nil {
		t.Fatalf("GenerateManifests: %v", err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("response (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(*svc.lastReq.Load(), req); diff != "" {
		t.Errorf("request as the server saw it (-got +want):\n%s", diff)
	}

	rev, err := c.ResolveRevision(ctx, req.Repo, "main")
	if err != nil || rev != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("ResolveRevision = %q, %v", rev, err)
	}
	refs, err := c.ListRefs(ctx, req.Repo)
	if diff := cmp.Diff(refs, git.Refs{Branches: []string{"main"}, Tags: []string{"v1"}}); err != nil || diff != "" {
		t.Errorf("ListRefs err %v (-got +want):\n%s", err, diff)
	}
	d, err := c.GetAppDetails(ctx, req)
	if err != nil || d.SourceType != v1alpha1.ApplicationSourceTypeKustomize || d.Kustomize == nil || d.Kustomize.Images[0] != "nginx:1.27" {
		t.Errorf("GetAppDetails = %+v, %v", d, err)
	}
	if err := c.TestRepository(ctx, req.Repo); err != nil {
		t.Errorf("TestRepository: %v", err)
	}
	for _, limit := range []int{2, 1, 0} {
		commits, err := c.ListCommits(ctx, req.Repo, "main", limit)
		if diff := cmp.Diff(commits, scriptedCommits[:limit]); err != nil || diff != "" {
			t.Errorf("ListCommits(%d) err %v (-got +want):\n%s", limit, err, diff)
		}
	}
}

// Sentinel errors keep their code, their message and errors.Is across the
// wire; secrets of the request never come back.
func TestErrorsKeepMeaning(t *testing.T) {
	creds := &reposerver.Credentials{Username: "bob", Password: "hunter22", BearerToken: "tok-123"}
	for _, tc := range []struct {
		name     string
		err      error
		code     codes.Code
		sentinel error
		msg      string
	}{
		{"revision", fmt.Errorf("resolve %q: %w", "nope", git.ErrRevisionNotFound), codes.NotFound, git.ErrRevisionNotFound, `resolve "nope": revision not found`},
		{"auth", fmt.Errorf("fetch https://git.example.com/a: %w", git.ErrAuthentication), codes.Unauthenticated, git.ErrAuthentication, "fetch https://git.example.com/a: authentication failed"},
		{"invalid revision", git.ErrInvalidRevision, codes.InvalidArgument, git.ErrInvalidRevision, "invalid revision"},
		{"unsafe url", fmt.Errorf("x: %w", git.ErrUnsafeURL), codes.InvalidArgument, git.ErrUnsafeURL, "x: unsafe repository URL"},
		{"outside root", fmt.Errorf("values: %w", render.ErrOutsideRoot), codes.InvalidArgument, render.ErrOutsideRoot, "values: path outside the repository root"},
		{"too large", fmt.Errorf("render: %w", render.ErrTooLarge), codes.ResourceExhausted, render.ErrTooLarge, "render: manifest size limit exceeded"},
		{"render budget", fmt.Errorf("%w of 1 GiB", render.ErrBudgetExceeded), codes.ResourceExhausted, render.ErrBudgetExceeded, "render exceeded its memory budget of 1 GiB"},
		{"not git", fmt.Errorf("list commits: %w", reposerver.ErrNotGit), codes.FailedPrecondition, reposerver.ErrNotGit, "list commits: not a Git repository"},
		{"not exist", fmt.Errorf("open x: %w", os.ErrNotExist), codes.NotFound, os.ErrNotExist, "open x: file does not exist"},
		{"deadline", fmt.Errorf("render: %w", context.DeadlineExceeded), codes.DeadlineExceeded, context.DeadlineExceeded, "render: context deadline exceeded"},
		{"unclassified", errors.New(`app path "apps/nope" does not exist in the repository`), codes.Unknown, nil, `app path "apps/nope" does not exist in the repository`},
		{"secrets scrubbed", errors.New("clone https://bob:hunter22@git.example.com/a failed, token tok-123"), codes.Unknown, nil, "clone https://bob:***@git.example.com/a failed, token ***"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, addr := serve(t, &scripted{err: tc.err}, ServerOptions{})
			c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
			_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: "https://git.example.com/a", Credentials: creds}})
			if err == nil {
				t.Fatal("GenerateManifests succeeded, want an error")
			}
			if got := status.Code(err); got != tc.code {
				t.Errorf("code = %s, want %s", got, tc.code)
			}
			if got := err.Error(); got != tc.msg {
				t.Errorf("message = %q, want %q", got, tc.msg)
			}
			if tc.sentinel != nil && !errors.Is(err, tc.sentinel) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.sentinel)
			}
			for _, s := range []string{"hunter22", "tok-123"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q contains a secret", err)
				}
			}
		})
	}
}

// The repositories a render needs cross the wire whole, for the caller
// to look up and ask again with.
func TestRepositoriesNeededCrossesTheWire(t *testing.T) {
	urls := []string{"https://git.example.com/base.git", "git@git.example.com:org/other.git"}
	srv, addr := serve(t, &scripted{err: fmt.Errorf("kustomize: %w", &reposerver.RepositoriesNeededError{URLs: urls})}, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{Repo: reposerver.Repository{URL: "https://git.example.com/a"}})
	var needed *reposerver.RepositoriesNeededError
	if !errors.As(err, &needed) || !slices.Equal(needed.URLs, urls) {
		t.Fatalf("err = %#v, want RepositoriesNeededError{%v}", err, urls)
	}
}

func TestPanicIsInternal(t *testing.T) {
	srv, addr := serve(t, &scripted{panicMsg: "renderer exploded"}, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{})
	if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "exploded") {
		t.Fatalf("error = %v (code %s), want Internal without the panic value", err, status.Code(err))
	}
	// The server survives.
	if _, err := c.ResolveRevision(t.Context(), reposerver.Repository{}, "main"); err != nil {
		t.Fatalf("ResolveRevision after a panic: %v", err)
	}
}

func TestClientDeadline(t *testing.T) {
	srv, addr := serve(t, &scripted{}, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	ctx, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	_, err := c.ResolveRevision(ctx, reposerver.Repository{}, "main")
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want DeadlineExceeded matching context.DeadlineExceeded", err)
	}
}

// Responses above the size limit fail cleanly, and the connection keeps
// working for smaller ones.
func TestMessageSizeLimit(t *testing.T) {
	const limit = 64 << 10
	svc := &scripted{res: &reposerver.ManifestResponse{Manifests: []*unstructured.Unstructured{configMap("big", 2*limit)}}}
	srv, addr := serve(t, svc, ServerOptions{MaxMessageSize: limit})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM(), MaxMessageSize: limit})
	_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("error = %v (code %s), want ResourceExhausted", err, status.Code(err))
	}
	// A request above the limit is refused by the client before sending.
	big := reposerver.ManifestRequest{AppName: strings.Repeat("a", 2*limit)}
	if _, err := c.GetAppDetails(t.Context(), big); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("oversized request: error = %v, want ResourceExhausted", err)
	}
	if _, err := c.ResolveRevision(t.Context(), reposerver.Repository{}, "main"); err != nil {
		t.Fatalf("small call after an oversized one: %v", err)
	}
}

// Under memory pressure a render waits for the one in flight, and is
// refused with ResourceExhausted when that takes too long; calls that do
// not render are not held.
func TestRenderWaitsForMemory(t *testing.T) {
	runtime.GC() // the live heap is known from the first collection on
	guard := memguard.New(memguard.Options{Limit: 1, Interval: time.Millisecond})
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go guard.Run(ctx)
	for !guard.Pressure() {
		time.Sleep(time.Millisecond)
	}
	svc := &scripted{res: &reposerver.ManifestResponse{}, block: make(chan struct{})}
	srv, addr := serve(t, svc, ServerOptions{Memory: guard, MemoryWait: 100 * time.Millisecond})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	first := make(chan error, 1)
	go func() {
		_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{})
		first <- err
	}()
	for svc.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := c.GenerateManifests(t.Context(), reposerver.ManifestRequest{})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "memory pressure") {
		t.Fatalf("a render while another runs under pressure: %v (code %s), want ResourceExhausted naming the memory pressure", err, status.Code(err))
	}
	if _, err := c.ResolveRevision(t.Context(), reposerver.Repository{}, "main"); err != nil {
		t.Fatalf("ResolveRevision under pressure: %v", err)
	}
	close(svc.block)
	if err := <-first; err != nil {
		t.Fatalf("the render in flight: %v", err)
	}
	if w := guard.State().Waits; w != 1 {
		t.Errorf("waits = %d, want 1", w)
	}
}

func TestHealthServing(t *testing.T) {
	srv, addr := serve(t, &scripted{}, ServerOptions{})
	c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM()})
	if err := c.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// A standard protobuf health client (what probes use) gets SERVING for
	// the server as a whole and for the RepoServer service.
	for _, service := range []string{"", ServiceName} {
		res, err := healthpb.NewHealthClient(c.conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: service})
		if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health %q = %v, %v; want SERVING", service, res.GetStatus(), err)
		}
	}
}

func TestServerCertificateVerification(t *testing.T) {
	srv, addr := serve(t, &scripted{}, ServerOptions{})
	otherCert, _, err := selfsigned.Certificate("graphcd-repo-server", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts ClientOptions
		ok   bool
	}{
		{"system roots do not trust a self-signed cert", ClientOptions{}, false},
		{"another certificate is not trusted", ClientOptions{CACert: otherCert}, false},
		{"the server's certificate is trusted", ClientOptions{CACert: srv.CertificatePEM()}, true},
		{"wrong server name", ClientOptions{CACert: srv.CertificatePEM(), ServerName: "evil.example.com"}, false},
		{"insecure skips verification", ClientOptions{Insecure: true}, true},
		{"plaintext client against a TLS server", ClientOptions{Plaintext: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr, tc.opts)
			_, err := c.ResolveRevision(t.Context(), reposerver.Repository{}, "main")
			if (err == nil) != tc.ok {
				t.Fatalf("ResolveRevision error = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && status.Code(err) != codes.Unavailable {
				t.Errorf("code = %s, want Unavailable", status.Code(err))
			}
		})
	}
}

func TestMutualTLS(t *testing.T) {
	caCert, caKey := newCA(t, "graphcd test CA")
	otherCA, otherKey := newCA(t, "other CA")
	goodCert, goodKey := issueClientCert(t, caCert, caKey, "graphcd-server")
	badCert, badKey := issueClientCert(t, otherCA, otherKey, "intruder")

	svc := &scripted{}
	srv, addr := serve(t, svc, ServerOptions{ClientCA: pemCert(caCert)})
	for _, tc := range []struct {
		name       string
		cert, key  []byte
		wantServed bool
	}{
		{"no client certificate", nil, nil, false},
		{"certificate of another CA", badCert, badKey, false},
		{"certificate of the client CA", goodCert, goodKey, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr, ClientOptions{CACert: srv.CertificatePEM(), ClientCert: tc.cert, ClientKey: tc.key})
			before := svc.calls.Load()
			_, err := c.ResolveRevision(t.Context(), reposerver.Repository{}, "main")
			if (err == nil) != tc.wantServed {
				t.Fatalf("ResolveRevision error = %v, want served=%v", err, tc.wantServed)
			}
			if served := svc.calls.Load() > before; served != tc.wantServed {
				t.Errorf("service called = %v, want %v", served, tc.wantServed)
			}
		})
	}
}

// Credentials are never sent, nor accepted, over a plaintext connection.
func TestCredentialsRequireTLS(t *testing.T) {
	svc := &scripted{}
	_, addr := serve(t, svc, ServerOptions{Plaintext: true})
	c := dial(t, addr, ClientOptions{Plaintext: true})
	withCreds := reposerver.Repository{URL: "https://git.example.com/a", Credentials: &reposerver.Credentials{Password: "pw"}}

	if err := c.TestRepository(t.Context(), withCreds); !errors.Is(err, errCredentialsWithoutTLS) {
		t.Errorf("client: error = %v, want a refusal", err)
	}
	if err := c.TestRepository(t.Context(), reposerver.Repository{URL: "https://git.example.com/public"}); err != nil {
		t.Errorf("without credentials: %v", err)
	}
	calls := svc.calls.Load()
	// A client that does not check (not this package's) is refused by the
	// server before the Service sees the request.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	err = conn.Invoke(t.Context(), MethodTestRepository, &repoRequest{Repo: withCreds}, &emptyMessage{}, grpc.ForceCodec(jsonCodec{}))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("server: error = %v, want FailedPrecondition", err)
	}
	err = conn.Invoke(t.Context(), MethodListCommits, &listCommitsRequest{Repo: withCreds, Limit: 1}, &[]reposerver.Commit{}, grpc.ForceCodec(jsonCodec{}))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("server, ListCommits: error = %v, want FailedPrecondition", err)
	}
	// Credentials of a ref source count as much as the repository's.
	refOnly := reposerver.ManifestRequest{
		Repo:       reposerver.Repository{URL: "https://git.example.com/public"},
		RefSources: map[string]reposerver.RefSource{"$values": {Repo: withCreds}},
	}
	if _, err := c.GenerateManifests(t.Context(), refOnly); !errors.Is(err, errCredentialsWithoutTLS) {
		t.Errorf("client, ref source: error = %v, want a refusal", err)
	}
	err = conn.Invoke(t.Context(), MethodGenerateManifests, &refOnly, &reposerver.ManifestResponse{}, grpc.ForceCodec(jsonCodec{}))
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("server, ref source: error = %v, want FailedPrecondition", err)
	}
	if svc.calls.Load() != calls {
		t.Error("the Service was called with credentials over plaintext")
	}
}

func TestOptionErrors(t *testing.T) {
	cert, key, err := selfsigned.Certificate("graphcd-repo-server", []string{"repo-server.graphcd.svc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want string
	}{
		{"server cert without key", func() error { _, err := NewServer(&scripted{}, ServerOptions{TLSCert: cert}); return err }, "given together"},
		{"server bad pair", func() error {
			_, err := NewServer(&scripted{}, ServerOptions{TLSCert: cert, TLSKey: []byte("junk")})
			return err
		}, "TLS certificate"},
		{"server bad client CA", func() error { _, err := NewServer(&scripted{}, ServerOptions{ClientCA: []byte("junk")}); return err }, "client CA"},
		{"client bad CA", func() error { _, err := Dial("x:1", ClientOptions{CACert: []byte("junk")}); return err }, "CA certificate"},
		{"client key without cert", func() error { _, err := Dial("x:1", ClientOptions{ClientKey: key}); return err }, "given together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("error %q shows key material", err)
			}
		})
	}
	if _, err := NewServer(&scripted{}, ServerOptions{TLSCert: cert, TLSKey: key}); err != nil {
		t.Errorf("NewServer with a given pair: %v", err)
	}
}

func TestTargetHost(t *testing.T) {
	for in, want := range map[string]string{
		"repo-server:8081":                    "repo-server",
		"dns:///repo-server.graphcd.svc:8081": "repo-server.graphcd.svc",
		"[::1]:8081":                          "::1",
		"passthrough:///10.0.0.1:8081":        "10.0.0.1",
		"unix-without-port":                   "unix-without-port",
	} {
		if got := targetHost(in); got != want {
			t.Errorf("targetHost(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	cert, _, err := selfsigned.Certificate("graphcd-repo-server", nil)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := selfsigned.Fingerprint(cert)
	if err != nil || len(fp) != 64 {
		t.Errorf("Fingerprint = %q, %v; want 64 hex digits", fp, err)
	}
	if _, err := selfsigned.Fingerprint([]byte("junk")); err == nil {
		t.Error("selfsigned.Fingerprint(junk) succeeded")
	}
}

// newCA returns a self-signed CA certificate and its key.
func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// issueClientCert returns a client certificate and key (PEM) signed by ca.
func issueClientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string) ([]byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})); err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// A refresh through the client reaches the revision cache of every
// replica it balances over, once, before the first call naming the
// repository that each replica answers.
func TestInvalidateRevisionReachesEveryReplica(t *testing.T) {
	svcs := []*scripted{{}, {}}
	var addrs []resolver.Address
	for _, svc := range svcs {
		_, addr := serve(t, svc, ServerOptions{Plaintext: true})
		addrs = append(addrs, resolver.Address{Addr: addr})
	}
	r := manual.NewBuilderWithScheme("replicas")
	r.InitialState(resolver.State{Addresses: addrs})
	resolver.Register(r)
	c := dial(t, "replicas:///repo-server", ClientOptions{Plaintext: true})

	const url = "https://git.example.com/apps.git"
	resolve := func(repoURL string, calls int) {
		t.Helper()
		for range calls {
			if _, err := c.ResolveRevision(t.Context(), reposerver.Repository{URL: repoURL}, "main"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Round robin picks among the connected replicas: call until both
	// connected.
	for tries := 0; svcs[0].calls.Load() == 0 || svcs[1].calls.Load() == 0; tries++ {
		if tries == 500 {
			t.Fatalf("calls reached only one replica: %d and %d", svcs[0].calls.Load(), svcs[1].calls.Load())
		}
		resolve(url, 1)
		time.Sleep(10 * time.Millisecond)
	}
	for i, svc := range svcs {
		if n := svc.invalidations.Load(); n != 0 {
			t.Fatalf("replica %d invalidated %d times before any refresh", i, n)
		}
	}
	for round := int32(1); round <= 2; round++ {
		c.InvalidateRevision(url)
		resolve("https://git.example.com/other.git", 4)
		resolve(url, 6)
		for i, svc := range svcs {
			if n := svc.invalidations.Load(); n != round {
				t.Errorf("after refresh %d, replica %d invalidated %d times, want %d", round, i, n, round)
			}
			if got := svc.invalidated.Load(); got == nil || *got != url {
				t.Errorf("replica %d invalidated %v, want %s", i, got, url)
			}
		}
	}
}
