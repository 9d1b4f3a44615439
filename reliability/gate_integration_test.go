//go:build integration

package reliability

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gate stands in front of the git server on an address of its own, so a
// test can take the forge down (nothing listens: connections are refused)
// and bring it back on the same address, or have it answer 404 for every
// repository (a repository deleted).
type gate struct {
	addr    string
	proxy   http.Handler
	deleted atomic.Bool

	mu  sync.Mutex
	srv *http.Server
}

// newGate proxies to the server at target (http://host:port) until the
// test ends.
func newGate(t *testing.T, target string) *gate {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: lis.Addr().String(), proxy: httputil.NewSingleHostReverseProxy(u)}
	g.serve(lis)
	t.Cleanup(g.down)
	return g
}

func (g *gate) serve(lis net.Listener) {
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.deleted.Load() {
			http.NotFound(w, r)
			return
		}
		g.proxy.ServeHTTP(w, r)
	})}
	g.mu.Lock()
	g.srv = srv
	g.mu.Unlock()
	go func() { _ = srv.Serve(lis) }()
}

// down closes the listener and every connection.
func (g *gate) down() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.srv != nil {
		_ = g.srv.Close()
		g.srv = nil
	}
}

// up listens again on the same address.
func (g *gate) up(ctx context.Context) error {
	var lis net.Listener
	var err error
	for range 50 { // the port may linger a moment after close
		if lis, err = (&net.ListenConfig{}).Listen(ctx, "tcp", g.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return err
	}
	g.serve(lis)
	return nil
}
