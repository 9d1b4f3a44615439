package controller

import (
	"context"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/trace"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A step is one stage of a reconcile. It reads what the steps before it
// left in the pass and leaves its own outcome there. done ends the
// reconcile with the pass's result and err; a step that fails is done.
type step func(p *pass, ctx context.Context) (done bool, err error)

// steps are the stages of every reconcile, in order.
var steps = []step{
	(*pass).admit,
	(*pass).load,
	(*pass).skip,
	(*pass).trace,
	(*pass).claim,
	(*pass).catchUp,
	(*pass).admitMemory,
	(*pass).finalize,
	(*pass).operate,
	(*pass).hydrate,
	(*pass).compare,
	(*pass).autoSync,
	(*pass).summarize,
	(*pass).write,
	(*pass).announce,
	(*pass).followUp,
}

// Reconcile implements reconcile.Reconciler: it runs the steps on the
// app until one is done, or all are and the app is looked at again after
// the resync period or sooner when a step asks.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, err error) {
	p := &pass{r: r, key: req.NamespacedName, requests: &requestApp{key: req.NamespacedName}}
	defer p.observe(time.Now())
	defer func() {
		if p.release != nil {
			p.release()
		}
	}()
	defer func() { p.endSpan(err) }()
	ctx = withRequestApp(ctx, p.requests)
	for _, s := range steps {
		if done, err := s(p, p.context(ctx)); done || err != nil {
			return p.result, err
		}
	}
	return ctrl.Result{RequeueAfter: p.requeue()}, nil
}

// observe records how long the reconcile that began at start took, when
// this controller's shard claimed the app (graphcd_app_reconcile).
func (p *pass) observe(start time.Time) {
	if p.t != nil {
		appReconcileSeconds.WithLabelValues(p.key.Namespace, p.app.Spec.Destination.Server).Observe(time.Since(start).Seconds())
	}
}

// pass is one reconcile of one app: what its steps found out and did.
type pass struct {
	r   *Reconciler
	key types.NamespacedName
	app v1alpha1.Application
	// t is the app's destination, as claim resolved it.
	t *target
	// status is the status the reconcile writes, before the status the
	// app had when the write began (what announce measures changes from).
	status, before *v1alpha1.ApplicationStatus
	now            metav1.Time
	op             opOutcome
	// cmp is the comparison, or cmpErr says why there is none; failures
	// counts the app's comparisons in a row that failed in a way a retry
	// may mend, this one included.
	cmp      *Comparison
	cmpErr   error
	failures int
	auto     autoSyncDecision
	// refreshRequested is the app's RefreshRequestedAnnotation when the
	// comparison began: a different one at the end asks for another.
	refreshRequested string
	// queued is true when the writers write the status (and request the
	// automated sync) rather than this reconcile.
	queued bool
	// result is what Reconcile returns when a step is done.
	result ctrl.Result
	// ctx and span are the reconcile's span and its context, once trace
	// started it (only when tracing is on).
	ctx  context.Context //nolint:containedctx // one reconcile's, handed from step to step
	span trace.Span
	// requests labels the requests to the destination the pass makes.
	requests *requestApp
	// release ends the pass's admission by Options.Memory.
	release func()
}

// admit ignores an app outside the namespaces the controller serves
// (--application-namespaces): when they are globs the cache holds every
// namespace's apps, and those of the others are nobody's business here.
// An app whose project does not allow its namespace is admitted, and
// refused by the project's rules with an InvalidSpecError condition.
func (p *pass) admit(context.Context) (bool, error) {
	return !p.r.opts.AppNamespaces.Allowed(p.key.Namespace), nil
}

// load reads the app. One that is gone is forgotten, here and in the
// state the API reads.
func (p *pass) load(ctx context.Context) (bool, error) {
	err := p.r.client.Get(ctx, p.key, &p.app)
	if apierrors.IsNotFound(err) {
		p.r.forget(p.key)
		p.r.forgetAppState(ctx, p.key)
		return true, nil
	}
	if err != nil {
		return true, err
	}
	p.requests.project = p.app.ProjectName()
	return false, nil
}

// skip stops at an app annotated argocd.argoproj.io/skip-reconcile:
// nothing of it is processed, not even its deletion, until the annotation
// goes (its removal is an update, which brings the app back here).
func (p *pass) skip(context.Context) (bool, error) {
	return v1alpha1.SkipsReconcile(&p.app), nil
}

// claim resolves the app's destination, and goes on only when this
// controller's shard owns it (see Reconciler.claim).
func (p *pass) claim(ctx context.Context) (bool, error) {
	t, ok := p.r.claim(ctx, &p.app)
	p.t = t
	return !ok, nil
}

// catchUp makes the status write the app's last reconcile queued, and
// reads the app past the cache when the cache has not caught up with this
// controller's last write: an operation continues from the state last
// written, and status changes are judged from it, never from a copy a
// step behind.
func (p *pass) catchUp(ctx context.Context) (bool, error) {
	if err := p.r.writes.flush(ctx, p.key); err != nil {
		return true, err
	}
	if !p.r.memory.behind(p.key, p.app.ResourceVersion) {
		return false, nil
	}
	if err := p.r.apiReader().Get(ctx, p.key, &p.app); err != nil {
		return true, client.IgnoreNotFound(err)
	}
	return false, nil
}

// admitMemory waits, under memory pressure, until the reconciles in
// flight have ended (see Options.Memory): the app is compared, and its
// operation run, one at a time, not each adding its memory to the
// others'. The admission lasts until the reconcile ends.
func (p *pass) admitMemory(ctx context.Context) (bool, error) {
	release, err := p.r.opts.Memory.Admit(ctx)
	if err != nil {
		return true, nil //nolint:nilerr // shutting down: nothing to retry
	}
	p.release = release
	return false, nil
}

// finalize serves an app being deleted (see Reconciler.finalize): a
// cascade finalizer deletes its resources first, and nothing is compared
// or synced any more.
func (p *pass) finalize(ctx context.Context) (bool, error) {
	if p.app.DeletionTimestamp == nil {
		return false, nil
	}
	var err error
	p.result, err = p.r.finalize(ctx, &p.app, p.t)
	return true, err
}

// operate starts the requested operation or takes the next step of the
// one in progress, recording it in the status this reconcile writes,
// which starts as the app's.
func (p *pass) operate(ctx context.Context) (bool, error) {
	p.status, p.now = p.app.Status.DeepCopy(), metav1.Now()
	p.op = p.r.operate(ctx, &p.app, p.t, p.status, p.now)
	return false, nil
}

// compare compares the app with its destination. A comparison that
// succeeds adds the finalizers its deletion hooks need, goes into the
// status and is remembered; one that fails is reported by summarize.
func (p *pass) compare(ctx context.Context) (bool, error) {
	var rendered *rendered
	p.refreshRequested = p.app.Annotations[v1alpha1.RefreshRequestedAnnotation]
	p.cmp, rendered, p.cmpErr = p.r.compareRendered(ctx, &p.app, p.t, refreshMode(&p.app))
	p.failures = p.r.memory.compared(p.key, p.cmpErr != nil && conditionFor(p.cmpErr) == v1alpha1.ApplicationConditionComparisonError)
	if p.cmpErr == nil {
		if err := p.r.addFinalizers(ctx, &p.app, deletionFinalizers(rendered.desired)); err != nil {
			return true, err
		}
		applyComparison(p.status, &p.app, p.cmp, p.now)
		p.r.memory.setState(p.key, &AppState{Comparison: p.cmp, Revision: p.cmp.Revision, predictions: p.cmp.predictions})
	}
	return false, nil
}

// decidesAutoSync reports whether the automated sync policy has a say:
// after a comparison that succeeded, in a reconcile that did not work on
// an operation.
func (p *pass) decidesAutoSync() bool { return p.cmp != nil && !p.op.ran }

// autoSync asks the automated sync policy what the comparison calls for.
// A sync it decides on is started in the status that records the
// comparison: one status write fewer per automated sync, and no reconcile
// that only saves it.
func (p *pass) autoSync(context.Context) (bool, error) {
	if !p.decidesAutoSync() {
		return false, nil
	}
	p.auto = decideAutoSync(&p.app, p.status, p.cmp, p.now.Time)
	if p.auto.op != nil {
		p.r.startOperation(&p.app, p.auto.op, p.status, p.now)
	}
	return false, nil
}

// summarize turns what the comparison and the automated sync policy
// found into the status's conditions.
func (p *pass) summarize(context.Context) (bool, error) {
	noteComparison(p.status, p.cmp, p.cmpErr, p.now)
	if p.decidesAutoSync() {
		noteAutoSync(p.status, p.auto, p.now)
	}
	return false, nil
}

// write removes a finished operation from the app, requests the
// automated sync decided on, and writes the status. A reconcile that only
// compared (and perhaps decided on an automated sync) queues its writes
// for the writers instead, and announces the comparison at once; one that
// ran or finished an operation, or serves a refresh annotation, writes
// first.
func (p *pass) write(ctx context.Context) (bool, error) {
	if p.op.finished {
		if err := p.r.clearOperation(ctx, &p.app); err != nil {
			return true, err
		}
	}
	p.before = p.app.Status.DeepCopy()
	p.queued = !p.op.ran && !p.op.finished && p.app.Operation == nil && refreshMode(&p.app) == "" &&
		p.r.writes.enqueue(p.app.DeepCopy(), p.status.DeepCopy(), p.auto.op, p.now)
	if p.queued {
		return false, nil
	}
	if err := p.r.requestAutoSync(ctx, &p.app, p.auto.op); err != nil {
		return true, err
	}
	if err := p.r.writeStatus(ctx, &p.app, p.status, p.now); err != nil {
		if ctx.Err() != nil {
			return true, nil //nolint:nilerr // shutting down: nothing to retry
		}
		return true, err
	}
	// A finished sync counts once its end is written: a write that fails
	// has the next reconcile finish it again.
	if p.op.finished {
		countSync(&p.app, p.status.OperationState)
	}
	return false, nil
}

// announce publishes the reconcile's events (see Reconciler.announce).
func (p *pass) announce(context.Context) (bool, error) {
	p.r.announce(&p.app, p.before, p.status)
	return false, nil
}

// followUp removes the refresh annotation the reconcile served and
// remembers the version of the app it left; when the writers write, they
// do the last.
func (p *pass) followUp(ctx context.Context) (bool, error) {
	if refreshMode(&p.app) != "" {
		// A refresh asked again since the comparison began (a push during
		// the render) is served by another pass, not cleared unserved.
		again := p.app.Annotations[v1alpha1.RefreshRequestedAnnotation] != p.refreshRequested
		var err error
		if !again {
			err = p.r.clearRefresh(ctx, &p.app)
		}
		if again || apierrors.IsConflict(err) {
			p.result = ctrl.Result{RequeueAfter: time.Millisecond}
			return true, nil
		}
		if err != nil {
			return true, err
		}
	}
	if p.queued {
		return false, nil
	}
	p.r.memory.wrote(&p.app)
	return false, nil
}

// requeue is when to look at the app again: after the resync period plus
// up to half of it as jitter, or sooner when the operation, the automated
// sync policy, a cluster that could not be reached, a comparison that
// failed or a finished operation asks.
func (p *pass) requeue() time.Duration {
	resync := p.r.opts.Resync
	next := resync + time.Duration(rand.Int64N(int64(resync/2))) //nolint:gosec // spreading refreshes, not security
	var retryConn, retryCmp, recheck time.Duration
	if p.t.connErr != nil {
		retryConn = connectRetry
	}
	if p.failures > 0 {
		retryCmp = comparisonRetry(p.failures)
	}
	if p.op.finished {
		recheck = afterOperation
	}
	for _, d := range []time.Duration{p.op.requeue, p.auto.requeue, retryConn, retryCmp, recheck} {
		if d > 0 && d < next {
			next = d
		}
	}
	return next
}

// Retries of a comparison that failed with a ComparisonError (a
// repository or repository server that did not answer, a render that
// failed): the first after firstComparisonRetry, each next one twice as
// late up to maxComparisonRetry, so that an app is seen again about that
// long after an outage ends rather than at its next periodic refresh.
// Past slowRetryAfter failures in a row (about five minutes) the retries
// slow to slowComparisonRetry: a render that fails on its own content
// then costs one attempt a minute, and a longer outage is seen a minute
// late at most. Each retry adds up to a quarter of its wait as jitter, so
// that the apps of one repository do not retry together; while a
// repository does not answer, the repository server answers their
// retries from its memory of the failure (revisioncache.FailureTTL).
const (
	firstComparisonRetry = 5 * time.Second
	maxComparisonRetry   = 20 * time.Second
	slowRetryAfter       = 18
	slowComparisonRetry  = time.Minute
)

// comparisonRetry is when to compare again after failures comparisons in
// a row failed.
func comparisonRetry(failures int) time.Duration {
	var d time.Duration
	switch {
	case failures > slowRetryAfter:
		d = slowComparisonRetry
	case failures > 3:
		d = maxComparisonRetry
	default:
		d = min(firstComparisonRetry<<(failures-1), maxComparisonRetry)
	}
	return d + time.Duration(rand.Int64N(int64(d/4))) //nolint:gosec // spreading retries, not security
}
