// Package roles runs graphcd's split roles as processes the way deploy/ha
// runs them as Pods: API replicas, controller shards (a leader and its
// standbys each), repository servers behind one DNS name, and Redis. The
// fault battery (reliability) and the scale harness (hack/loadtest) share
// it.
package roles

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// Role is one graphcd process (a server, controller or repo-server
// replica), in a process group of its own like a Pod's container, which
// dies with the process that started it. Its log file lives across
// restarts, so a panic in any incarnation is found.
type Role struct {
	Name string
	Bin  string
	Args []string
	Env  []string // added to this process's environment
	// Health is a URL that answers 200 once the role serves.
	Health  string
	LogPath string
	// ProfileAddr serves the role's runtime profiles (/debug/pprof/) when
	// the installation asked for them (Options.Profiles).
	ProfileAddr string

	mu   sync.Mutex
	proc *localcluster.Process
	// held is set while the caller has stopped or killed proc.
	held bool
}

// identityRE finds a controller's Lease identity in its log.
var identityRE = regexp.MustCompile(`msg="application controller running" .*identity=(\S+)`)

// Start runs the role and waits (up to 2 minutes) until its health URL
// answers 200.
func (r *Role) Start(ctx context.Context) error {
	if f, err := os.OpenFile(r.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		_, _ = fmt.Fprintf(f, "--- %s started at %s\n", r.Name, time.Now().UTC().Format(time.RFC3339Nano))
		_ = f.Close()
	}
	proc, err := localcluster.StartProcessEnv(r.Name, r.LogPath, r.Bin, r.Env, r.Args...)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.proc, r.held = proc, false
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	last := "no answer yet"
	for {
		if proc.Exited() {
			return fmt.Errorf("%s exited at start; log:\n%s", r.Name, proc.LogTail(40))
		}
		if req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.Health, nil); err == nil {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
				last = resp.Status
			} else {
				last = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to serve %s: %s", r.Name, r.Health, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Process is the running incarnation, nil before the first Start.
func (r *Role) Process() *localcluster.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc
}

// Signal sends sig to the role's process group.
func (r *Role) Signal(sig syscall.Signal) error {
	p := r.Process()
	if p == nil || p.Exited() {
		return fmt.Errorf("%s is not running", r.Name)
	}
	return syscall.Kill(-p.PID(), sig)
}

// Kill sends SIGKILL to the role's process group (the role and its render
// workers) and waits until it is gone.
func (r *Role) Kill() {
	r.hold()
	_ = r.Signal(syscall.SIGKILL)
	if p := r.Process(); p != nil {
		p.Stop(10 * time.Second)
	}
}

// Stop ends the role with SIGTERM, and SIGKILL after a while.
func (r *Role) Stop() {
	r.hold()
	if p := r.Process(); p != nil {
		_ = r.Signal(syscall.SIGCONT) // a stopped role would never see SIGTERM
		p.Stop(30 * time.Second)
	}
}

// Running reports whether the process is alive.
func (r *Role) Running() bool {
	p := r.Process()
	return p != nil && !p.Exited()
}

// exitedOnItsOwn reports whether the process ended without Stop or Kill,
// as a Pod's container the kubelet would restart.
func (r *Role) exitedOnItsOwn() bool {
	r.mu.Lock()
	p, held := r.proc, r.held
	r.mu.Unlock()
	return p != nil && !held && p.Exited()
}

// hold marks the running process as ended by the caller.
func (r *Role) hold() {
	r.mu.Lock()
	r.held = true
	r.mu.Unlock()
}

// PID is the process's id, 0 before the first Start.
func (r *Role) PID() int {
	if p := r.Process(); p != nil {
		return p.PID()
	}
	return 0
}

// Log is the role's log, every incarnation's.
func (r *Role) Log() string {
	b, _ := os.ReadFile(r.LogPath)
	return string(b)
}

// LeaseIdentity is the Lease identity the running controller announced.
func (r *Role) LeaseIdentity() string {
	log := r.Log()
	if i := strings.LastIndex(log, "--- "+r.Name+" started"); i >= 0 {
		log = log[i:]
	}
	if m := identityRE.FindStringSubmatch(log); m != nil {
		return m[1]
	}
	return ""
}

// panicRE matches what the Go runtime prints for a panic or a fatal
// error, and what a recovered panic logs.
var panicRE = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[running\]:)|level=ERROR .*panic`)

// Panics returns the log lines of the role that tell of a panic.
func (r *Role) Panics() []string {
	var found []string
	for line := range strings.Lines(r.Log()) {
		if panicRE.MatchString(line) {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}
