// Package localredis runs a real redis-server (Debian's redis-server package)
// on a free loopback port with a password, for tests and the demo.
package localredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// Server is a running redis-server.
type Server struct {
	// Addr is host:port on 127.0.0.1.
	Addr string
	// Password is required by the server (AUTH).
	Password string
	// Dir is the server's working directory, removed by Stop.
	Dir  string
	proc *localcluster.Process
}

var installOnce sync.Once

// Binary finds redis-server, installing Debian's package when it is missing
// and we are root. Otherwise it says what to install.
func Binary(ctx context.Context) (string, error) {
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", errors.New("redis-server not found: install it with `sudo apt-get install redis-server` (Debian/Ubuntu) and run the tests again")
	}
	var installErr error
	installOnce.Do(func() { installErr = aptInstall(ctx, "redis-server") })
	if installErr != nil {
		return "", installErr
	}
	return exec.LookPath("redis-server")
}

func aptInstall(ctx context.Context, pkg string) error {
	install := func() ([]byte, error) {
		cmd := exec.CommandContext(ctx, "apt-get", "install", "-y", "-qq", "--no-install-recommends", pkg)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		return cmd.CombinedOutput()
	}
	if _, err := install(); err == nil {
		return nil
	}
	if out, err := exec.CommandContext(ctx, "apt-get", "update", "-qq").CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get update: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if out, err := install(); err != nil {
		return fmt.Errorf("apt-get install %s: %w: %s", pkg, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Start runs redis-server on a free port with a random password and waits
// until it answers PING.
func Start(ctx context.Context) (*Server, error) {
	bin, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	pw := make([]byte, 16)
	if _, err := rand.Read(pw); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "graphcd-redis-")
	if err != nil {
		return nil, fmt.Errorf("create redis directory: %w", err)
	}
	s := &Server{Dir: dir, Password: hex.EncodeToString(pw)}
	for range 3 {
		port, err := localcluster.FreePort()
		if err != nil {
			_ = s.Stop()
			return nil, err
		}
		s.Addr = "127.0.0.1:" + strconv.Itoa(port)
		// The password goes in a config file, not argv, so `ps` doesn't show it.
		conf := filepath.Join(dir, "redis.conf")
		cfg := fmt.Sprintf("bind 127.0.0.1\nport %d\nrequirepass %s\nsave \"\"\nappendonly no\ndir %s\nprotected-mode yes\n", port, s.Password, dir)
		if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
			_ = s.Stop()
			return nil, fmt.Errorf("write redis config: %w", err)
		}
		s.proc, err = localcluster.StartProcess("redis-server", filepath.Join(dir, "redis.log"), bin, conf)
		if err != nil {
			_ = s.Stop()
			return nil, err
		}
		waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = s.proc.WaitFor(waitCtx, s.ping)
		cancel()
		if err == nil {
			return s, nil
		}
		if !s.proc.Exited() || !strings.Contains(s.proc.LogTail(20), "Address already in use") {
			_ = s.Stop()
			return nil, err
		}
	}
	_ = s.Stop()
	return nil, errors.New("redis-server: no free port after 3 tries")
}

// ping speaks just enough RESP to authenticate and PING, so readiness does
// not depend on the client library under test.
func (s *Server) ping(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(conn, "AUTH %s\r\nPING\r\n", s.Password); err != nil {
		return err
	}
	buf := make([]byte, 64)
	var got string
	for !strings.Contains(got, "+PONG") {
		n, err := conn.Read(buf)
		if err != nil {
			return fmt.Errorf("redis not ready: %w (read %q)", err, got)
		}
		got += string(buf[:n])
		if strings.HasPrefix(got, "-") {
			return fmt.Errorf("redis answered %q", strings.TrimSpace(got))
		}
	}
	return nil
}

// PID is the server's process id.
func (s *Server) PID() int { return s.proc.PID() }

// Kill ends the server at once (SIGKILL), as a crash or an OOM kill
// does; Restart brings it back.
func (s *Server) Kill() {
	_ = syscall.Kill(-s.PID(), syscall.SIGKILL)
	s.proc.Stop(5 * time.Second)
}

// Restart starts a killed or stopped server again on the same address,
// with the same password, and waits until it answers PING. It starts
// empty: the server keeps nothing on disk.
func (s *Server) Restart(ctx context.Context) error {
	if !s.proc.Exited() {
		return fmt.Errorf("redis-server (pid %d) is still running", s.PID())
	}
	bin, err := Binary(ctx)
	if err != nil {
		return err
	}
	proc, err := localcluster.StartProcess("redis-server", filepath.Join(s.Dir, "redis.log"), bin, filepath.Join(s.Dir, "redis.conf"))
	if err != nil {
		return err
	}
	s.proc = proc
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.proc.WaitFor(waitCtx, s.ping)
}

// Stop ends the server and removes its directory.
func (s *Server) Stop() error {
	if s.proc != nil {
		s.proc.Stop(5 * time.Second)
	}
	var err error
	if s.proc != nil && localcluster.Alive(s.PID()) {
		err = fmt.Errorf("redis-server (pid %d) still running after stop", s.PID())
	}
	return errors.Join(err, os.RemoveAll(s.Dir))
}
