package inproc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds and timing of worker processes.
const (
	maxWorkerStderr   = 4 << 10
	maxWorkerRequest  = 64 << 20
	workerReplyMargin = 1 << 20
	workerWaitDelay   = 5 * time.Second
	// maxJobsPerWorker retires a worker after that many jobs, so that
	// nothing a library caches grows for ever.
	maxJobsPerWorker = 100
	// workerAddressSpaceHeadroom is the address space a worker may reserve
	// beyond its memory budget: an idle Go process (runtime arenas, thread
	// stacks, C library arenas) reserves about 1.5-2 GiB it never touches.
	workerAddressSpaceHeadroom = 4 << 30
	// workerSampleInterval is how often a busy worker's resident memory is
	// read.
	workerSampleInterval = 10 * time.Millisecond
)

// Errors of process.do that the pool explains.
var (
	errOverBudget    = errors.New("render worker passed its memory budget")
	errReplyTooLarge = errors.New("frame too large")
)

// process is one render worker: a child process that serves jobs over its
// standard input and output, one at a time.
type process struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *headBuffer   // of the current job
	done   chan struct{} // closed once the process is reaped
	// waitErr is the process's exit, set before done is closed.
	waitErr error
	killed  atomic.Bool // by this process, not by the kernel
	jobs    int
}

// startProcess starts a worker under its address-space limit.
func startProcess(command []string, limit int64) (*process, error) {
	// No context: a worker outlives the request that started it; kill ends
	// it. The command is the operator's, not a request's.
	cmd := exec.Command(command[0], command[1:]...) //nolint:gosec,noctx // G204: see above
	// GOTRACEBACK=none: a crash prints the runtime's reason and its own
	// stack, not every goroutine.
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(limit/4*3, 10), "MALLOC_ARENA_MAX=2", "GOTRACEBACK=none")
	// Its own process group, killed whole; and killed with this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = workerWaitDelay
	p := &process{cmd: cmd, stderr: &headBuffer{max: maxWorkerStderr}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	p.out = bufio.NewReader(out)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	// The worker blocks reading its first job until the limit is in place.
	as := uint64(limit) + workerAddressSpaceHeadroom //nolint:gosec // G115: newWorkers makes the limit positive
	// ESRCH: it has exited already, having run nothing; the first job
	// finds it gone and reports how it ended.
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}, nil); err != nil && !errors.Is(err, unix.ESRCH) {
		p.kill()
		return nil, fmt.Errorf("limit render worker memory: %w", err)
	}
	return p, nil
}

// do sends one job and reads its answer, killing the worker when its
// resident memory passes limit (errOverBudget), when ctx ends (ctx.Err())
// or when the answer passes maxReply (errReplyTooLarge).
func (p *process) do(ctx context.Context, body []byte, maxReply, limit int64) ([]byte, error) {
	p.jobs++
	p.stderr.reset()
	type result struct {
		reply []byte
		err   error
	}
	res := make(chan result, 1)
	go func() {
		if err := writeFrame(p.in, body); err != nil {
			res <- result{err: err}
			return
		}
		reply, err := readFrame(p.out, maxReply)
		res <- result{reply, err}
	}()
	over := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go p.watch(limit, over, stopWatch)
	select {
	case r := <-res:
		select {
		case <-over:
			return nil, errOverBudget
		default:
		}
		if errors.Is(r.err, errReplyTooLarge) {
			p.kill()
		}
		return r.reply, r.err
	case <-over:
		return nil, errOverBudget
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
}

// watch kills the worker when its resident memory passes limit, and then
// closes over.
func (p *process) watch(limit int64, over chan<- struct{}, stop <-chan struct{}) {
	statm := "/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/statm"
	page := int64(os.Getpagesize())
	t := time.NewTicker(workerSampleInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		b, err := os.ReadFile(statm)
		if err != nil {
			return // exited
		}
		// statm: size resident shared text lib data dt, in pages.
		fields := strings.Fields(string(b))
		if len(fields) < 2 {
			return
		}
		resident, err := strconv.ParseInt(fields[1], 10, 64)
		if err == nil && resident*page > limit {
			close(over)
			p.kill()
			return
		}
	}
}

// alive reports whether the process has not exited.
func (p *process) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// kill ends the worker's process group and waits until it is reaped.
func (p *process) kill() {
	if p.alive() {
		p.killed.Store(true)
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	_ = p.in.Close()
	<-p.done
}

// end waits (briefly) for a worker that stopped answering to exit, and
// reports the head of its stderr for the job, whether this process killed
// it, and how it exited.
func (p *process) end() (stderr string, killed bool, waitErr error) {
	select {
	case <-p.done:
	case <-time.After(workerWaitDelay):
		p.kill()
	}
	return p.stderr.String(), p.killed.Load(), p.waitErr
}

// writeFrame writes b with its length in front.
func writeFrame(w io.Writer, b []byte) error {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

// readFrame reads one frame of at most max bytes; io.EOF means the stream
// ended between frames.
func readFrame(r io.Reader, max int64) ([]byte, error) {
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint64(n[:])
	if size > uint64(max) { //nolint:gosec // G115: max is positive
		return nil, fmt.Errorf("%w: %d bytes, more than %d", errReplyTooLarge, size, max)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, fmt.Errorf("read frame: %w", io.ErrUnexpectedEOF)
	}
	return b, nil
}

// headBuffer keeps the first max bytes written to it since its last
// reset: where the Go runtime puts the reason of a crash.
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *headBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *headBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = b.buf[:0]
}

func (b *headBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
