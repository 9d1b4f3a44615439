package localcluster

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one child started by this package: it runs in its own process
// group, writes to a log file, and is killed if the starting process dies.
type Process struct {
	Name string
	// Log is the file that holds the child's stdout and stderr.
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// launcher starts every child from one goroutine locked to its OS thread,
// which never exits. Pdeathsig fires when the thread that forked the child
// dies, so starting from an arbitrary goroutine's thread would let children be
// killed early when the Go runtime retires that thread.
var launcher struct {
	once sync.Once
	reqs chan launchReq
}

type launchReq struct {
	cmd   *exec.Cmd
	reply chan error
}

func startLocked(cmd *exec.Cmd) error {
	launcher.once.Do(func() {
		launcher.reqs = make(chan launchReq)
		go func() {
			runtime.LockOSThread()
			for r := range launcher.reqs {
				r.reply <- r.cmd.Start()
			}
		}()
	})
	reply := make(chan error)
	launcher.reqs <- launchReq{cmd: cmd, reply: reply}
	return <-reply
}

// StartProcess runs bin with args, appending its output to logPath. It is
// used for every child of a cluster and by sibling packages (Redis).
func StartProcess(name, logPath, bin string, args ...string) (*Process, error) {
	return StartProcessEnv(name, logPath, bin, nil, args...)
}

// StartProcessEnv is StartProcess with env ("KEY=value") added to this
// process's environment.
func StartProcessEnv(name, logPath, bin string, env []string, args ...string) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(bin, args...) //nolint:noctx // lives until Stop, which ends it gracefully
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startLocked(cmd); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the child's process id (also its process group id).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited reports whether the child has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the child's process group, waits up to grace, then
// kills the group. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	pgid := p.PID()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	// Anything left in the group (a grandchild) goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// LogTail returns the last lines of the child's log, for error messages.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	return lastLines(string(b), n)
}

// WaitFor polls ready every 50 ms until it returns nil, the child exits, or
// ctx ends. The error names the child and carries the tail of its log.
func (p *Process) WaitFor(ctx context.Context, ready func(context.Context) error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%w):\n%s", p.Name, p.err, p.LogTail(15))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last check: %w):\n%s", p.Name, ctx.Err(), last, p.LogTail(15))
		case <-tick.C:
		}
	}
}

// addrInUse reports whether a child failed because a port we picked was taken
// between choosing and binding it.
func (p *Process) addrInUse() bool {
	return p.Exited() && strings.Contains(p.LogTail(30), "address already in use")
}

// Ports FreePort hands out: below the kernel's ephemeral range, so that
// no outgoing connection of this machine is given one between FreePort's
// check and the caller's bind (with port 0 the kernel picks from the range
// it also gives outgoing connections, and a busy test run has thousands).
const (
	freePortLow  = 10000
	freePortHigh = 32768 // Linux's default ip_local_port_range starts here
)

var (
	portsMu sync.Mutex
	// portsGiven are the ports this process handed out, never handed out
	// twice: a caller may pick several before binding any.
	portsGiven = map[int]bool{}
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago,
// for a child process to bind. It picks at random below the ephemeral
// port range (its start read from /proc where it is lower than usual),
// where only processes that choose ports themselves can take it first.
func FreePort() (int, error) {
	high := freePortHigh
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > freePortLow && lo < high {
				high = lo
			}
		}
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	var lc net.ListenConfig
	for range 100 {
		port := freePortLow + rand.IntN(high-freePortLow) //nolint:gosec // a port to try, not a secret
		if portsGiven[port] {
			continue
		}
		l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		_ = l.Close()
		portsGiven[port] = true
		return port, nil
	}
	return 0, errors.New("find a free port: 100 random ports below the ephemeral range were all taken")
}

// FreeAddr is FreePort as a 127.0.0.1:port address.
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(port), nil
}

// Alive reports whether a process with pid exists (and is not a zombie).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// Leftovers lists running processes whose command line mentions marker (a
// cluster's temporary directory), so a test suite can prove it left nothing
// behind.
func Leftovers(marker string) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) || !Alive(pid) {
			continue
		}
		found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
	}
	return found
}
