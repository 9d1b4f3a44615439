//go:build integration

package reliability

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// role is one graphcd process (a server, controller or repo-server
// replica), in a process group of its own like a Pod's container, which
// dies with the test process. Its log file lives across restarts, so a
// panic in any incarnation is found.
type role struct {
	name    string
	args    []string
	env     []string // added to the test's environment
	health  string   // URL answering 200 once the role serves
	logPath string

	mu   sync.Mutex
	proc *localcluster.Process
}

// identityRE finds a controller's Lease identity in its log.
var identityRE = regexp.MustCompile(`msg="application controller running" .*identity=(\S+)`)

// start runs the role and waits until its health URL answers 200.
func (r *role) start(t *testing.T) {
	t.Helper()
	if r.logPath == "" {
		r.logPath = filepath.Join(logDir, r.name+".log")
	}
	if f, err := os.OpenFile(r.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		_, _ = fmt.Fprintf(f, "--- %s started at %s\n", r.name, time.Now().UTC().Format(time.RFC3339Nano))
		_ = f.Close()
	}
	proc, err := localcluster.StartProcessEnv(r.name, r.logPath, graphcdBin, r.env, r.args...)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.proc = proc
	r.mu.Unlock()
	waitFor(t, 2*time.Minute, r.name+" to serve "+r.health, func() (bool, string) {
		if proc.Exited() {
			t.Fatalf("%s exited at start; log:\n%s", r.name, proc.LogTail(40))
		}
		resp, err := http.Get(r.health)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
}

func (r *role) process() *localcluster.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc
}

// signal sends sig to the role's process group.
func (r *role) signal(sig syscall.Signal) error {
	p := r.process()
	if p == nil || p.Exited() {
		return fmt.Errorf("%s is not running", r.name)
	}
	return syscall.Kill(-p.PID(), sig)
}

// kill sends SIGKILL to the role's process group (the role and its
// render workers) and waits until it is gone.
func (r *role) kill() {
	_ = r.signal(syscall.SIGKILL)
	if p := r.process(); p != nil {
		p.Stop(10 * time.Second)
	}
}

// stop ends the role with SIGTERM, and SIGKILL after a while.
func (r *role) stop() {
	if p := r.process(); p != nil {
		_ = r.signal(syscall.SIGCONT) // a stopped role would never see SIGTERM
		p.Stop(30 * time.Second)
	}
}

// running reports whether the process is alive.
func (r *role) running() bool {
	p := r.process()
	return p != nil && !p.Exited()
}

// pid is the process's id.
func (r *role) pid() int {
	if p := r.process(); p != nil {
		return p.PID()
	}
	return 0
}

// log is the role's log, every incarnation's.
func (r *role) log() string {
	b, _ := os.ReadFile(r.logPath)
	return string(b)
}

// leaseIdentity is the Lease identity the running controller announced.
func (r *role) leaseIdentity() string {
	log := r.log()
	if i := strings.LastIndex(log, "--- "+r.name+" started"); i >= 0 {
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

// panics returns the log lines of the role that tell of a panic.
func (r *role) panics() []string {
	var found []string
	for line := range strings.Lines(r.log()) {
		if panicRE.MatchString(line) {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

// waitFor checks cond every 200 ms until it holds, failing the test with
// cond's last word after timeout (generous: it stops a hung test, it is
// not a limit the test asserts).
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s: %s", timeout, what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
