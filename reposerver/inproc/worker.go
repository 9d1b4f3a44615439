package inproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

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

// WorkerOptions make Local run every Helm, Kustomize and Jsonnet render
// in a worker process (a directory of YAML and JSON files alone is only
// read, within its size limits, and renders in this process), one render
// at a time per worker,
// under a memory budget the render cannot escape. The budget is enforced
// from outside the worker: this process samples the worker's resident
// memory during each render and kills it past MemoryLimit, and the kernel
// refuses address space beyond MemoryLimit + workerAddressSpaceHeadroom
// (RLIMIT_AS, set before the worker reads its first job), so that one huge
// allocation fails at once. A worker is also killed at the render
// deadline and when Local is closed.
// Workers that answered are reused (they return the render's memory to
// the system first) up to maxJobsPerWorker renders; a killed one is
// replaced by a new one at the next render. A chart or Jsonnet program
// that builds a huge value thus fails its own render with an error
// wrapping render.ErrBudgetExceeded, and the process serving the API and
// every other render go on.
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

// workers is the pool of render worker processes.
type workers struct {
	command []string
	limit   int64
	slots   chan struct{} // one per job running
	idle    chan *process // workers waiting for a job

	mu     sync.Mutex
	closed bool
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
	return &workers{
		command: o.Command, limit: o.MemoryLimit,
		slots: make(chan struct{}, o.Parallelism), idle: make(chan *process, o.Parallelism),
	}, nil
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

// run renders job on an idle worker process, or a new one, within
// timeout (for messages: ctx carries the deadline). A worker that passes
// its budget, its deadline or ctx is killed; one that answered goes back
// to the pool.
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
	p, err := w.get()
	if err != nil {
		return nil, err
	}
	maxReply := 2*job.Request.Limits.WithDefaults().MaxCombinedSize + workerReplyMargin
	reply, err := p.do(ctx, body, maxReply, w.limit)
	switch {
	case errors.Is(err, errOverBudget):
		return nil, w.overBudget()
	case ctx.Err() != nil:
		return nil, stopped(ctx, timeout)
	case errors.Is(err, errReplyTooLarge):
		return nil, fmt.Errorf("render worker answered more than %d bytes: %w", maxReply, render.ErrTooLarge)
	case err != nil:
		return nil, w.failure(p, err)
	}
	w.put(p)
	return decodeWorkerReply(reply)
}

// get returns an idle live worker, or starts one.
func (w *workers) get() (*process, error) {
	for {
		select {
		case p := <-w.idle:
			if p.alive() {
				return p, nil
			}
			p.kill()
		default:
			return startProcess(w.command, w.limit)
		}
	}
}

// put returns p to the pool; it ends p instead when p has served
// maxJobsPerWorker jobs or the pool is closed.
func (w *workers) put(p *process) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || p.jobs >= maxJobsPerWorker {
		p.kill()
		return
	}
	select {
	case w.idle <- p:
	default:
		p.kill()
	}
}

// close ends the idle workers now and every busy one when it is done.
func (w *workers) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	for {
		select {
		case p := <-w.idle:
			p.kill()
		default:
			return
		}
	}
}

func (w *workers) overBudget() error {
	return fmt.Errorf("%w of %s", render.ErrBudgetExceeded, formatBytes(w.limit))
}

// stopped explains why ctx ended a render.
func stopped(ctx context.Context, timeout time.Duration) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("render exceeded its deadline of %s: %w", timeout, ctx.Err())
	}
	return fmt.Errorf("render stopped: %w", ctx.Err())
}

// failure explains a worker that stopped answering: out of its memory
// budget (the Go runtime's "out of memory", or killed by the kernel's OOM
// killer), or crashed.
func (w *workers) failure(p *process, err error) error {
	stderr, killed, waitErr := p.end()
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) && !killed {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return w.overBudget()
		}
	}
	if outOfMemory(stderr) {
		return w.overBudget()
	}
	if waitErr != nil {
		return fmt.Errorf("render worker failed (%w): %s", waitErr, diagnostic(stderr))
	}
	return fmt.Errorf("render worker failed: %w", err)
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
// WorkerOptions.Command): it reads jobs from in, one frame each, renders
// them one at a time and writes each answer (the manifests or the error)
// as a frame to out, until in ends. It returns an error only when a frame
// could not be read or written.
func ServeRenderWorker(ctx context.Context, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	for {
		frame, err := readFrame(r, maxWorkerRequest)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("render worker: read job: %w", err)
		}
		var req workerRequest
		if err := json.Unmarshal(frame, &req); err != nil {
			return fmt.Errorf("render worker: read job: %w", err)
		}
		reply, err := json.Marshal(serveJob(ctx, req.Job))
		if err != nil {
			return fmt.Errorf("render worker: encode answer: %w", err)
		}
		// Give the job's memory back before the next job is measured.
		debug.FreeOSMemory()
		if err := writeFrame(out, reply); err != nil {
			return fmt.Errorf("render worker: write answer: %w", err)
		}
	}
}

// serveJob renders one job in the worker.
func serveJob(ctx context.Context, job renderJob) workerResponse {
	var res workerResponse
	objs, err := runRecovered(ctx, job)
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
	return res
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
