package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/remote"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var servingAddr = regexp.MustCompile(`msg="repo server serving" addr=(\S+)`)

// The command serves until its context ends and answers health checks and
// calls over a self-signed TLS channel.
func TestRepoServerServesAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr lockedBuffer
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("s", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"repo-server", "--listen", "127.0.0.1:0", "--cache-secret-file", secret}, &stdout, &stderr)
	}()
	var addr string
	for addr == "" {
		select {
		case code := <-done:
			t.Fatalf("repo-server exited %d early: %s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if m := servingAddr.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
	}
	if !strings.Contains(stderr.String(), "certificate-sha256=") {
		t.Errorf("no certificate fingerprint logged: %s", stderr.String())
	}
	c, err := remote.Dial(addr, remote.ClientOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if err := c.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	_, err = c.ResolveRevision(ctx, reposerver.Repository{URL: "file:///nowhere"}, "main")
	if err == nil || !strings.Contains(err.Error(), "unsafe") {
		t.Errorf("file:// repository: error = %v, want it refused as unsafe", err)
	}
	cancel()
	if code := <-done; code != command.ExitOK {
		t.Fatalf("exit %d after cancel: %s", code, stderr.String())
	}
}

func TestRepoServerFlagErrors(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("too short"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"cert without key", nil, []string{"--tls-cert", "x.pem"}, "--tls-cert and --tls-key must be given together"},
		{"bad listen", nil, []string{"--listen", "nope"}, `--listen: invalid listen address "nope"`},
		{"bad listen from env", map[string]string{"GRAPHCD_LISTEN": "nope"}, nil, `GRAPHCD_LISTEN: invalid listen address`},
		{"short secret", nil, []string{"--listen", "127.0.0.1:0", "--cache-secret-file", short}, "--cache-secret-file: the key must be at least 32 bytes, got 9"},
		{"missing cert file", nil, []string{"--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"}, "--tls-cert: open /nonexistent/c.pem"},
		{"plaintext with cert", nil, []string{"--plaintext", "--tls-cert", "c", "--tls-key", "k"}, "--plaintext conflicts"},
		{"bad redis url", nil, []string{"--listen", "127.0.0.1:0", "--redis", "redis://:pw@[bad"}, "--redis: invalid Redis URL"},
		{"zero message size", nil, []string{"--max-message-size", "0"}, "--max-message-size: must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.env, append([]string{"repo-server"}, tc.args...)...)
			if code != command.ExitError || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", code, stderr, tc.want)
			}
			if strings.Contains(stderr, ":pw@") {
				t.Errorf("stderr shows the Redis password: %q", stderr)
			}
		})
	}
}
