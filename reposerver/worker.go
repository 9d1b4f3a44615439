package reposerver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/reposerver/render"
)

// Defaults of WorkerOptions.
const (
	// DefaultWorkerMemoryLimit bounds the resident memory of one render
	// worker: 1 GiB.
	DefaultWorkerMemoryLimit int64 = 1 << 30
	// DefaultWorkerParallelism bounds how many render workers run at once.
	DefaultWorkerParallelism = 4
)

// WorkerOptions make Local run every Helm, Kustomize and directory
// (Jsonnet) render in a child process of its own, under a memory budget the
// render cannot escape, and killed at the render deadline or when Local is
// closed. The budget is enforced twice from outside the worker: this
// process samples the worker's resident memory and kills it past
// MemoryLimit, and the kernel refuses address space beyond MemoryLimit +
// workerAddressSpaceHeadroom (RLIMIT_AS, set before the worker reads its
// job), so that one huge allocation fails at once. A chart or Jsonnet program that builds a huge value
// then fails its own render with an error wrapping
// render.ErrBudgetExceeded, and the process serving the API goes on.
type WorkerOptions struct {
	// Command starts a worker: its argv, whose process calls
	// ServeRenderWorker on its standard input and output (graphcd:
	// [executable, "render-worker"]). Required.
	Command []string
	// MemoryLimit bounds the resident memory of one worker, in bytes; 0
	// means DefaultWorkerMemoryLimit.
	MemoryLimit int64
	// Parallelism bounds how many workers run at once; further renders
	// wait for a free one. 0 means DefaultWorkerParallelism.
	Parallelism int
}

// workers starts render workers.
type workers struct {
	command []string
	limit   int64
	slots   chan struct{}
}

func newWorkers(o WorkerOptions) (*workers, error) {
	if len(o.Command) == 0 || o.Command[0] == "" {
		return nil, errors.New("reposerver: Worker.Command is required")
	}
	if o.MemoryLimit <= 0 {
		o.MemoryLimit = DefaultWorkerMemoryLimit
	}
	if o.Parallelism <= 0 {
		o.Parallelism = DefaultWorkerParallelism
	}
	return &workers{command: o.Command, limit: o.MemoryLimit, slots: make(chan struct{}, o.Parallelism)}, nil
}

// workerRequest is what a worker reads from its standard input.
type workerRequest struct {
	Job renderJob `json:"job"`
}

// workerResponse is what a worker writes to its standard output.
type workerResponse struct {
	Manifests json.RawMessage `json:"manifests,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Class names the sentinel Error wraps, so errors.Is works across the
	// process boundary.
	Class string `json:"class,omitempty"`
}

// workerErrorClasses are the sentinels a worker's error keeps.
var workerErrorClasses = map[string]error{
	"too-large":    render.ErrTooLarge,
	"outside-root": render.ErrOutsideRoot,
	"not-exist":    os.ErrNotExist,
	"budget":       render.ErrBudgetExceeded,
	"deadline":     context.DeadlineExceeded,
	"canceled":     context.Canceled,
}

// Bounds of what a worker may send back beyond its manifests.
const (
	maxWorkerStderr   = 4 << 10
	workerReplyMargin = 1 << 20
	workerWaitDelay   = 5 * time.Second
	// workerAddressSpaceHeadroom is the address space a worker may reserve
	// beyond its memory budget: an idle Go process (runtime arenas, thread
	// stacks, C library arenas) reserves about 1.5-2 GiB it never touches.
	workerAddressSpaceHeadroom = 4 << 30
	// workerSampleInterval is how often a worker's resident memory is read.
	workerSampleInterval = 10 * time.Millisecond
)

// run renders job in a new worker process, within timeout (for messages:
// ctx carries the deadline).
func (w *workers) run(ctx context.Context, job renderJob, timeout time.Duration) ([]*unstructured.Unstructured, error) {
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, stopped(ctx, timeout)
	}
	defer func() { <-w.slots }()

	body, err := json.Marshal(workerRequest{Job: job})
	if err != nil {
		return nil, fmt.Errorf("encode render job: %w", err)
	}
	cmd := exec.CommandContext(ctx, w.command[0], w.command[1:]...)
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+strconv.FormatInt(w.limit/4*3, 10), "MALLOC_ARENA_MAX=2")
	// Its own process group, killed whole; and killed with this process.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = workerWaitDelay
	stderr := &headBuffer{max: maxWorkerStderr}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start render worker: %w", err)
	}
	// The worker blocks reading its job until the limit is in place.
	as := uint64(w.limit) + workerAddressSpaceHeadroom //nolint:gosec // G115: newWorkers makes the limit positive
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}, nil); err != nil {
		_ = cmd.Cancel()
		_ = cmd.Wait()
		return nil, fmt.Errorf("limit render worker memory: %w", err)
	}
	overBudget := make(chan struct{})
	watchDone := make(chan struct{})
	defer close(watchDone)
	go w.watch(cmd, overBudget, watchDone)
	go func() {
		_, _ = stdin.Write(body)
		_ = stdin.Close()
	}()
	maxReply := 2*job.Request.Limits.WithDefaults().MaxCombinedSize + workerReplyMargin
	reply, readErr := io.ReadAll(io.LimitReader(stdout, maxReply+1))
	if int64(len(reply)) > maxReply {
		_ = cmd.Cancel()
	}
	waitErr := cmd.Wait()
	over := false
	select {
	case <-overBudget:
		over = true
	default:
	}
	switch {
	case over:
		return nil, w.overBudget()
	case ctx.Err() != nil:
		return nil, stopped(ctx, timeout)
	case int64(len(reply)) > maxReply:
		return nil, fmt.Errorf("render worker answered more than %d bytes: %w", maxReply, render.ErrTooLarge)
	case waitErr != nil:
		return nil, w.failure(waitErr, stderr.String())
	case readErr != nil:
		return nil, fmt.Errorf("read render worker answer: %w", readErr)
	}
	return decodeWorkerReply(reply)
}

// watch kills the worker when its resident memory passes the budget, and
// then closes over.
func (w *workers) watch(cmd *exec.Cmd, over chan<- struct{}, done <-chan struct{}) {
	statm := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/statm"
	page := int64(os.Getpagesize())
	t := time.NewTicker(workerSampleInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
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
		if err == nil && resident*page > w.limit {
			close(over)
			_ = cmd.Cancel()
			return
		}
	}
}

func (w *workers) overBudget() error {
	return fmt.Errorf("render exceeded its memory budget of %s: %w", formatBytes(w.limit), render.ErrBudgetExceeded)
}

// stopped explains why ctx ended a render.
func stopped(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("render exceeded its deadline of %s: %w", timeout, ctx.Err())
	}
	return fmt.Errorf("render stopped: %w", ctx.Err())
}

// failure explains a worker that exited without answering: out of its
// memory budget (the Go runtime's "out of memory", or killed by the
// kernel's OOM killer), or crashed.
func (w *workers) failure(waitErr error, stderr string) error {
	var exitErr *exec.ExitError
	killed := false
	if errors.As(waitErr, &exitErr) {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	if killed || outOfMemory(stderr) {
		return w.overBudget()
	}
	return fmt.Errorf("render worker failed (%w): %s", waitErr, diagnostic(stderr))
}

// outOfMemoryMessages are what the Go runtime says when the kernel refuses
// it address space (the last one under the race detector).
var outOfMemoryMessages = []string{"out of memory", "cannot allocate memory", "address space collisions"}

func outOfMemory(stderr string) bool {
	for _, m := range outOfMemoryMessages {
		if strings.Contains(stderr, m) {
			return true
		}
	}
	return false
}

// decodeWorkerReply turns a worker's answer back into objects or the
// error it reported.
func decodeWorkerReply(reply []byte) ([]*unstructured.Unstructured, error) {
	var res workerResponse
	if err := json.Unmarshal(reply, &res); err != nil {
		return nil, fmt.Errorf("read render worker answer: %w", err)
	}
	if res.Error != "" {
		return nil, &workerError{msg: res.Error, sentinel: workerErrorClasses[res.Class]}
	}
	return objectsFromJSON(res.Manifests)
}

// workerError is an error a worker reported: its message, and the
// sentinel it wrapped there.
type workerError struct {
	msg      string
	sentinel error
}

func (e *workerError) Error() string { return e.msg }

// Unwrap returns the sentinel the worker's error wrapped, if any.
func (e *workerError) Unwrap() error { return e.sentinel }

// ServeRenderWorker is the body of a render worker process (see
// WorkerOptions.Command): it reads one job from in, renders it and writes
// the manifests, or the error, to out. It returns an error only when it
// could not read the job or write the answer.
func ServeRenderWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	var req workerRequest
	if err := json.NewDecoder(io.LimitReader(in, 64<<20)).Decode(&req); err != nil {
		return fmt.Errorf("render worker: read job: %w", err)
	}
	var res workerResponse
	objs, err := runRecovered(ctx, req.Job)
	if err == nil {
		res.Manifests, err = objectsToJSON(objs)
	}
	if err != nil {
		res.Error = err.Error()
		for class, sentinel := range workerErrorClasses {
			if errors.Is(err, sentinel) {
				res.Class = class
				break
			}
		}
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return fmt.Errorf("render worker: write answer: %w", err)
	}
	return nil
}

// runRecovered runs job, turning a panic into an error.
func runRecovered(ctx context.Context, job renderJob) (objs []*unstructured.Unstructured, err error) {
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("render panicked: %v", r)
		}
	}()
	return job.run(ctx)
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	max int
	buf bytes.Buffer
}

func (b *headBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (b *headBuffer) String() string { return b.buf.String() }

// diagnostic returns the Go runtime's own first line of a crash ("fatal
// error: ...", "panic: ...", "runtime: ..."), at most 256 bytes; other
// output (logs of the libraries) is never shown.
func diagnostic(stderr string) string {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		for _, p := range []string{"fatal error:", "panic:", "runtime:"} {
			if strings.HasPrefix(line, p) {
				return truncateText(line, 256)
			}
		}
	}
	return "no diagnostic"
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// formatBytes shows n in MiB or GiB.
func formatBytes(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
