package bootstrap_test

import (
	"net"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/bootstrap"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/remote"
)

// idle is a repository service no test call reaches: the health check
// below is answered by the gRPC server itself.
type idle struct{ reposerver.Service }

// The certificates work with graphcd's own repo-server and client as the
// HA manifests configure them: the server requires client certificates of
// ca.crt, and a client holding the client certificate checks the server
// by its Service name.
func TestRepoServerPKIWithRemote(t *testing.T) {
	pki, err := bootstrap.NewRepoServerPKI(bootstrap.RepoServerHosts("ops"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := remote.NewServer(idle{}, remote.ServerOptions{TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, ClientCA: pki.CACert})
	if err != nil {
		t.Fatal(err)
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

	for _, tc := range []struct {
		name string
		opts remote.ClientOptions
		ok   bool
	}{
		{"client certificate", remote.ClientOptions{CACert: pki.CACert, ClientCert: pki.ClientCert, ClientKey: pki.ClientKey, ServerName: "graphcd-repo-server.ops.svc"}, true},
		{"no client certificate", remote.ClientOptions{CACert: pki.CACert, ServerName: "graphcd-repo-server.ops.svc"}, false},
		{"server certificate as the client's", remote.ClientOptions{CACert: pki.CACert, ClientCert: pki.ServerCert, ClientKey: pki.ServerKey, ServerName: "graphcd-repo-server"}, false},
		{"name not in the certificate", remote.ClientOptions{CACert: pki.CACert, ClientCert: pki.ClientCert, ClientKey: pki.ClientKey, ServerName: "graphcd-repo-server.other.svc"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := remote.Dial(lis.Addr().String(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if err := c.Check(t.Context()); (err == nil) != tc.ok {
				t.Errorf("health check: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
