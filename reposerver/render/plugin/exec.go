package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/graphcd/graphcd/reposerver/render"
)

// Errors a plugin command can end with; the client sees them again
// through the codes of the wire protocol.
var (
	// ErrTimeout is wrapped when a command was killed because its call ran
	// out of time (or was abandoned by the caller).
	ErrTimeout = errors.New("plugin command timed out")
	// ErrCommandFailed is wrapped when a command exited non-zero or could
	// not start.
	ErrCommandFailed = errors.New("plugin command failed")
)

// stderrTail is how much of a failing command's stderr an error carries.
const stderrTail = 4 << 10

// waitDelay bounds how long Wait waits for output pipes after the process
// group was killed.
const waitDelay = 5 * time.Second

// output says what to do with a command's stdout.
type output struct {
	max  int64 // bytes kept
	kill bool  // more than max kills the command and fails it; otherwise the rest is dropped
}

// runCommand runs c in dir with env and returns its stdout as out says.
// The command runs in its own process group, which is killed as a whole
// when ctx ends, when stdout overflows a killing cap, and after the
// command exits, so no child outlives the call. redact rewrites stderr
// before it goes into an error (to hide the server's directories).
func runCommand(ctx context.Context, c *Command, dir string, env []string, out output, redact func(string) string) ([]byte, error) {
	argv := c.argv()
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("%w: empty command", ErrCommandFailed)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	stdout := &capWriter{max: out.max, kill: out.kill, full: cancel}
	stderr := &tailWriter{max: stderrTail}
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay

	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %w", ErrCommandFailed, argv[0], render.Bare(err))
	}
	err := cmd.Wait()
	_ = killGroup(cmd.Process.Pid) // children left running in the background

	switch {
	case stdout.exceeded:
		return nil, fmt.Errorf("%s: output larger than %d bytes: %w", argv[0], out.max, errOutputTooLarge)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s killed: %w", ErrTimeout, argv[0], context.Cause(ctx))
	case err != nil:
		msg := fmt.Sprintf("%s: %v", argv[0], err)
		if tail := strings.TrimSpace(redact(stderr.String())); tail != "" {
			msg += ": " + tail
		}
		return nil, fmt.Errorf("%w: %s", ErrCommandFailed, msg)
	}
	return stdout.buf.Bytes(), nil
}

// errOutputTooLarge marks a command whose stdout passed its cap; callers
// turn it into render.ErrTooLarge.
var errOutputTooLarge = errors.New("output limit exceeded")

// killGroup sends SIGKILL to the process group led by pid.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// capWriter keeps up to max bytes. With kill set, it calls full once when
// more arrive and fails; otherwise it drops the excess.
type capWriter struct {
	buf      bytes.Buffer
	max      int64
	kill     bool
	exceeded bool
	full     func()
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.exceeded {
		return 0, errOutputTooLarge
	}
	room := w.max - int64(w.buf.Len())
	if int64(len(p)) <= room {
		return w.buf.Write(p)
	}
	if !w.kill {
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	w.exceeded = true
	w.full()
	return 0, errOutputTooLarge
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	buf       []byte
	max       int
	truncated bool
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
		w.truncated = true
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	b := w.buf
	if len(b) > w.max {
		b = b[len(b)-w.max:]
		w.truncated = true
	}
	if w.truncated {
		return "..." + string(b)
	}
	return string(b)
}
