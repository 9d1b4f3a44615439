package controller

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// statusWrites queues the writes of reconciles that only compared an app
// (no operation ran or was asked for): its status, and the operation of
// an automated sync the comparison decided on. A processor then goes on
// to the next app while the API server takes the writes. A push to a
// repository of 1,000 apps is then compared, and announced to
// subscribers, at the speed of the comparisons rather than of 1,000
// writes (see docs/benchmarks.md, "Git push webhook to OutOfSync").
//
// An app has at most one queued write, and every reconcile of an app first
// waits for, or makes, the write queued by the one before (flush), so a
// reconcile never starts from a status older than the last one computed.
type statusWrites struct {
	r *Reconciler
	// writers is how many goroutines write: as many as there are
	// processors, so the API server sees the concurrency it saw when each
	// processor wrote its own status.
	writers int

	mu      sync.Mutex
	cond    *sync.Cond
	started bool
	fifo    []types.NamespacedName
	pending map[types.NamespacedName]*queuedStatus
	// running holds the writes in progress; the channel closes when the
	// write is done.
	running map[types.NamespacedName]chan struct{}
}

// queuedStatus is a status to write over app (the object as read, with
// the resourceVersion the writes must match), and the automated sync to
// request before it, if any.
type queuedStatus struct {
	app    *v1alpha1.Application
	status *v1alpha1.ApplicationStatus
	op     *v1alpha1.Operation
	now    metav1.Time
}

func newStatusWrites(r *Reconciler) *statusWrites {
	w := &statusWrites{r: r, pending: map[types.NamespacedName]*queuedStatus{}, running: map[types.NamespacedName]chan struct{}{}}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// Start runs the writers until ctx ends (manager.Runnable). Until it is
// called, every status is written by its reconcile.
func (w *statusWrites) Start(ctx context.Context) error {
	w.mu.Lock()
	w.started = true
	w.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.started = false
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	var wg sync.WaitGroup
	for range max(w.writers, 1) {
		wg.Go(func() { w.work(ctx) })
	}
	wg.Wait()
	return nil
}

// enqueue queues the write of status over app, and of op (nil for none)
// after it, and reports true, or reports false when no writer runs (the
// caller writes them).
func (w *statusWrites) enqueue(app *v1alpha1.Application, status *v1alpha1.ApplicationStatus, op *v1alpha1.Operation, now metav1.Time) bool {
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started {
		return false
	}
	if _, queued := w.pending[key]; !queued {
		w.fifo = append(w.fifo, key)
	}
	w.pending[key] = &queuedStatus{app: app, status: status, op: op, now: now}
	w.cond.Signal()
	return true
}

// flush waits for the write of key in progress, if any, and makes the
// queued one, if any, itself.
func (w *statusWrites) flush(ctx context.Context, key types.NamespacedName) error {
	w.mu.Lock()
	for {
		done, running := w.running[key]
		if !running {
			break
		}
		w.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
		w.mu.Lock()
	}
	q := w.pending[key]
	delete(w.pending, key) // its fifo entry is skipped
	w.mu.Unlock()
	if q == nil {
		return nil
	}
	return w.write(ctx, q)
}

func (w *statusWrites) work(ctx context.Context) {
	for {
		w.mu.Lock()
		for len(w.fifo) == 0 && w.started {
			w.cond.Wait()
		}
		if !w.started {
			w.mu.Unlock()
			return
		}
		key := w.fifo[0]
		w.fifo = w.fifo[1:]
		q := w.pending[key]
		if q == nil {
			w.mu.Unlock()
			continue // flushed by a reconcile
		}
		delete(w.pending, key)
		done := make(chan struct{})
		w.running[key] = done
		w.mu.Unlock()

		if err := w.write(ctx, q); err != nil && ctx.Err() == nil {
			// The reconcile computes the status again and writes it.
			w.r.log.Warn("write queued status", "app", key.String(), "err", err)
			go func() { _ = w.r.refreshWait(ctx, key) }()
		}

		w.mu.Lock()
		delete(w.running, key)
		close(done)
		w.mu.Unlock()
	}
}

// write writes q (the automated sync first, see requestAutoSync) and
// records the resourceVersion it left, which the next reconcile of the
// app compares with its cache.
func (w *statusWrites) write(ctx context.Context, q *queuedStatus) error {
	err := w.r.requestAutoSync(ctx, q.app, q.op)
	if err == nil {
		err = w.r.writeStatus(ctx, q.app, q.status, q.now)
	}
	if apierrors.IsNotFound(err) {
		return nil // deleted since: its reconcile forgets it
	}
	if err != nil {
		return err
	}
	w.r.memory.wrote(q.app)
	return nil
}
