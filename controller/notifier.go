package controller

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// Delivery defaults: the rate limit per service, how long one send may
// take, and how many run at once.
const (
	notifyRate        = 10
	notifyBurst       = 20
	notifySendTimeout = 20 * time.Second
	notifySends       = 8
	notifyProcessors  = 16
	// notifyStaleAfter is how old a pending claim must be to count as
	// abandoned: longer than any send may take.
	notifyStaleAfter   = notifySendTimeout + 25*time.Second
	notifyConflictWait = 250 * time.Millisecond
)

// notifier delivers notifications for the apps of this controller's
// shard: it evaluates each app's subscribed triggers whenever the app (or
// its project, or the configuration) changes, and records every delivery
// on the app (notifications.StateAnnotation) before and after sending, so
// that each condition is notified once across restarts and replicas.
type notifier struct {
	r          *Reconciler
	client     client.Client
	reader     client.Reader
	recorder   events.EventRecorder
	log        *slog.Logger
	namespace  string
	watch      *kubewatch.Source
	restConfig *rest.Config

	// config is the configuration now; nil while there is none.
	config atomic.Pointer[notifications.Config]
	events chan event.GenericEvent
	// sends bounds the sends running at once, abandoned ones included.
	sends chan struct{}

	mu     gosync.Mutex
	limits map[string]*rate.Limiter
	// unwritten are outcomes the state annotation does not show yet (its
	// write failed), by app and key: written before the app's next
	// evaluation, so that they are not sent again.
	unwritten map[types.NamespacedName]map[string]outcome
}

// outcome is the result of sending one claimed delivery.
type outcome struct {
	occ      notifications.Occurrence
	attempts int
	err      string
}

func newNotifier(r *Reconciler, mgr ctrl.Manager, cfg Config, recorder events.EventRecorder) *notifier {
	return &notifier{
		r: r, client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: recorder,
		log: cfg.Logger.With("component", "notifications"), namespace: cfg.Namespace, watch: cfg.Watch, restConfig: cfg.RESTConfig,
		events: make(chan event.GenericEvent, 1024), sends: make(chan struct{}, notifySends),
		limits: map[string]*rate.Limiter{}, unwritten: map[types.NamespacedName]map[string]outcome{},
	}
}

// setup follows the configuration and registers the reconciler. Both
// need the leader: a standby neither evaluates nor sends.
func (n *notifier) setup(mgr ctrl.Manager) error {
	if err := mgr.Add(manager.RunnableFunc(n.follow)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("notifications").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: notifyProcessors}).
		For(&v1alpha1.Application{}).
		Watches(&v1alpha1.AppProject{}, handler.EnqueueRequestsFromMapFunc(n.r.appsOfProject),
			builder.WithPredicates(predicate.AnnotationChangedPredicate{})).
		WatchesRawSource(source.Channel(n.events, &handler.EnqueueRequestForObject{})).
		Complete(n)
}

// follow keeps the configuration current: graphcd's ConfigMap and
// Secret, or Argo CD's when graphcd's are missing.
func (n *notifier) follow(ctx context.Context) error {
	watch := n.watch
	if watch == nil {
		kc, err := kubernetes.NewForConfig(n.restConfig)
		if err != nil {
			return err
		}
		watch = kubewatch.NewSource(ctx, kc, n.namespace)
	}
	var last [32]byte
	err := notifications.Follow(ctx, watch, func(cm *corev1.ConfigMap, secret *corev1.Secret) {
		if sum := configSum(cm, secret); sum != last {
			last = sum
			n.reload(ctx, cm, secret)
		}
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// configSum identifies a version of the configuration.
func configSum(cm *corev1.ConfigMap, secret *corev1.Secret) [32]byte {
	id := ""
	if cm != nil {
		id = cm.Name + "@" + string(cm.UID) + "@" + cm.ResourceVersion
	}
	if secret != nil {
		id += "/" + secret.Name + "@" + string(secret.UID) + "@" + secret.ResourceVersion
	}
	return sha256.Sum256([]byte(id))
}

// reload parses a new version of the configuration (keeping the last
// good one when it does not parse), says what is wrong with it once, and
// evaluates every app again.
func (n *notifier) reload(ctx context.Context, cm *corev1.ConfigMap, secret *corev1.Secret) {
	if cm == nil {
		if n.config.Swap(nil) != nil {
			n.log.InfoContext(ctx, "notifications: the ConfigMap is gone; delivery stopped")
		}
		return
	}
	var data map[string][]byte
	if secret != nil {
		data = secret.Data
	}
	cfg, err := notifications.Parse(cm.Data, data)
	if err != nil {
		n.log.ErrorContext(ctx, "notifications: the configuration does not parse; keeping the previous one", "configmap", cm.Name, "err", err)
		return
	}
	for _, w := range cfg.Warnings() {
		n.log.WarnContext(ctx, "notifications: "+w, "configmap", cm.Name)
	}
	n.config.Store(cfg)
	n.log.InfoContext(ctx, "notifications: configuration loaded; evaluating every app", "configmap", cm.Name)
	apps, err := n.r.listApps(ctx)
	if err != nil {
		n.log.WarnContext(ctx, "notifications: list applications", "err", err)
		return
	}
	for _, app := range apps {
		select {
		case n.events <- event.GenericEvent{Object: app}:
		case <-ctx.Done():
			return
		}
	}
}

// Reconcile implements reconcile.Reconciler: evaluate, claim, send,
// record.
func (n *notifier) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cfg := n.config.Load()
	if cfg == nil {
		return ctrl.Result{}, nil
	}
	var app v1alpha1.Application
	if err := n.client.Get(ctx, req.NamespacedName, &app); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !n.owns(ctx, &app) {
		return ctrl.Result{}, nil
	}
	if err := n.flush(ctx, req.NamespacedName, nil); err != nil {
		n.log.WarnContext(ctx, "notifications: record outcomes", "app", req.String(), "err", err)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	// The claim is made on the cached copy: its resourceVersion is the
	// write's precondition, so a copy the cache has not caught up with
	// claims nothing, and the app is evaluated again.
	plan, st, live, err := n.evaluate(ctx, cfg, &app, n.allow)
	if err != nil || !plan.Changed {
		return ctrl.Result{RequeueAfter: plan.Wait}, err
	}
	if err := n.write(ctx, &app, st, live); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return ctrl.Result{RequeueAfter: notifyConflictWait}, nil
		}
		return ctrl.Result{}, fmt.Errorf("claim notifications: %w", err)
	}
	if len(plan.Claims) == 0 {
		return ctrl.Result{RequeueAfter: plan.Wait}, nil
	}
	obj, err := notifications.AppObject(&app)
	if err != nil {
		return ctrl.Result{}, err
	}
	outcomes := map[string]outcome{}
	for _, key := range plan.Claims {
		occ := plan.Due[key]
		start := time.Now()
		err := n.send(ctx, cfg, obj, occ)
		notificationSendSeconds.WithLabelValues(occ.Destination.Service).Observe(time.Since(start).Seconds())
		o := outcome{occ: occ, attempts: st[key].Attempts}
		if err != nil {
			o.err = cfg.Redact(err.Error())
		}
		outcomes[key] = o
	}
	n.keep(req.NamespacedName, outcomes)
	if err := n.flush(ctx, req.NamespacedName, &app); err != nil {
		n.log.WarnContext(ctx, "notifications: record outcomes", "app", req.String(), "err", err)
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	wait := plan.Wait
	for _, o := range outcomes {
		if o.err != "" && o.attempts < notifications.MaxAttempts {
			wait = minPositive(wait, notifications.Backoff(o.attempts))
		}
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// minPositive is the smaller of a and b, ignoring zero.
func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// owns reports whether this controller's shard owns app (see claim).
func (n *notifier) owns(ctx context.Context, app *v1alpha1.Application) bool {
	return n.r.shardOwns(ctx, app)
}

// evaluate runs app's subscribed triggers and plans on its state.
func (n *notifier) evaluate(ctx context.Context, cfg *notifications.Config, app *v1alpha1.Application,
	allow func(string) (bool, time.Duration)) (notifications.Plan, notifications.State, map[string]bool, error) {
	var proj v1alpha1.AppProject
	projName := app.Spec.Project
	if projName == "" {
		projName = "default"
	}
	err := n.client.Get(ctx, types.NamespacedName{Namespace: n.r.projectNamespace(app.Namespace), Name: projName}, &proj)
	if err != nil && !apierrors.IsNotFound(err) {
		return notifications.Plan{}, nil, nil, err
	}
	subs, err := cfg.Subscriptions(app.Annotations, app.Labels, proj.Annotations)
	if err != nil {
		n.log.DebugContext(ctx, "notifications: subscriptions", "app", app.Namespace+"/"+app.Name, "err", err)
	}
	st, err := notifications.ParseState(app.Annotations[notifications.StateAnnotation])
	if err != nil {
		n.log.WarnContext(ctx, "notifications: the state annotation is unreadable and is started over", "app", app.Namespace+"/"+app.Name, "err", err)
	}
	if len(subs) == 0 && len(st) == 0 {
		return notifications.Plan{}, st, nil, nil
	}
	obj, err := notifications.AppObject(app)
	if err != nil {
		return notifications.Plan{}, nil, nil, err
	}
	occs, missing := cfg.Occurrences(obj, subs)
	if len(missing) > 0 {
		n.log.DebugContext(ctx, "notifications: subscribed triggers are not configured", "app", app.Namespace+"/"+app.Name, "triggers", missing)
	}
	live := map[string]bool{}
	for _, o := range occs {
		if o.Holds {
			live[o.Key] = true
		}
	}
	plan := notifications.Planner{Now: time.Now(), StaleAfter: notifyStaleAfter, Allow: allow}.Plan(st, occs)
	return plan, st, live, nil
}

// allow takes a token of service's rate limit, or says how long until
// one is there.
func (n *notifier) allow(service string) (bool, time.Duration) {
	n.mu.Lock()
	lim, ok := n.limits[service]
	if !ok {
		lim = rate.NewLimiter(notifyRate, notifyBurst)
		n.limits[service] = lim
	}
	n.mu.Unlock()
	res := lim.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		return false, d
	}
	return true, 0
}

// write replaces app's state annotation, on the condition that app is
// still at the resourceVersion it was read at: a claim made on an old
// copy, or by a second instance at the same time, fails with a conflict.
func (n *notifier) write(ctx context.Context, app *v1alpha1.Application, st notifications.State, live map[string]bool) error {
	var value any
	if len(st) > 0 {
		v, err := st.Encode(live)
		if err != nil {
			return err
		}
		value = v
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": app.ResourceVersion,
		"annotations":     map[string]any{notifications.StateAnnotation: value},
	}})
	if err != nil {
		return err
	}
	return n.client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch))
}

// send renders the occurrence's templates for its destination and sends
// them, within the send timeout.
func (n *notifier) send(ctx context.Context, cfg *notifications.Config, app map[string]any, occ notifications.Occurrence) error {
	msg, err := cfg.Render(app, occ.Destination, occ.Templates...)
	if err != nil {
		return err
	}
	svc, err := cfg.Sender(occ.Destination.Service)
	if err != nil {
		return err
	}
	return notifications.SendWithin(ctx, n.sends, notifySendTimeout, svc, *msg, occ.Destination)
}

// keep remembers outcomes until they are written.
func (n *notifier) keep(app types.NamespacedName, outcomes map[string]outcome) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.unwritten[app]
	if m == nil {
		m = map[string]outcome{}
		n.unwritten[app] = m
	}
	maps.Copy(m, outcomes)
}

// flush writes the app's unwritten outcomes onto its state, records an
// Event for each and forgets them. An outcome whose claim is no longer
// in the state (the app was deleted and made again) is dropped. claimed,
// when not nil, is the app as the claim's write left it: the first try
// writes on it, without reading the app again.
func (n *notifier) flush(ctx context.Context, key types.NamespacedName, claimed *v1alpha1.Application) error {
	n.mu.Lock()
	outcomes := maps.Clone(n.unwritten[key])
	n.mu.Unlock()
	if len(outcomes) == 0 {
		return nil
	}
	var app v1alpha1.Application
	var applied map[string]bool // key -> dead
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		applied = map[string]bool{}
		if claimed != nil {
			app, claimed = *claimed, nil
		} else if err := n.reader.Get(ctx, key, &app); err != nil {
			return err
		}
		st, err := notifications.ParseState(app.Annotations[notifications.StateAnnotation])
		if err != nil {
			return err
		}
		now := time.Now()
		for k, o := range outcomes {
			d := st[k]
			if d == nil || d.Phase != notifications.PhasePending || d.Attempts != o.attempts {
				continue // not our claim any more
			}
			if o.err == "" {
				st.Sent(k, now)
				applied[k] = false
			} else {
				applied[k] = st.Failed(k, o.err, now)
			}
		}
		if len(applied) == 0 {
			return nil
		}
		return n.write(ctx, &app, st, nil)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	n.mu.Lock()
	for k := range outcomes {
		delete(n.unwritten[key], k)
	}
	if len(n.unwritten[key]) == 0 {
		delete(n.unwritten, key)
	}
	n.mu.Unlock()
	if err == nil {
		for _, k := range slices.Sorted(maps.Keys(applied)) {
			o := outcomes[k]
			notificationDeliveries.WithLabelValues(o.occ.Destination.Service, o.occ.Trigger, strconv.FormatBool(o.err == "")).Inc()
			n.event(&app, o, applied[k])
		}
	}
	return nil
}

// event records a delivery's outcome as a Kubernetes Event on app.
func (n *notifier) event(app *v1alpha1.Application, o outcome, dead bool) {
	if n.recorder == nil {
		return
	}
	d := o.occ.Destination
	what := fmt.Sprintf("trigger %s, service %s, recipient %q", o.occ.Trigger, d.Service, d.Recipient)
	switch {
	case o.err == "":
		n.recorder.Eventf(app, nil, corev1.EventTypeNormal, "NotificationSent", "Notify", "Notified: %s", what)
	case dead:
		n.recorder.Eventf(app, nil, corev1.EventTypeWarning, "NotificationFailed", "Notify",
			"Gave up after %d attempts: %s: %s", o.attempts, what, o.err)
	default:
		n.recorder.Eventf(app, nil, corev1.EventTypeWarning, "NotificationFailed", "Notify",
			"Attempt %d of %d failed, retrying in %s: %s: %s", o.attempts, notifications.MaxAttempts, notifications.Backoff(o.attempts), what, o.err)
	}
}

// annotationsChanged is predicate.AnnotationChangedPredicate that
// ignores the notifications' state annotation: recording a delivery is no
// reason to compare the app again.
func annotationsChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld == nil || e.ObjectNew == nil {
			return false
		}
		was, is := maps.Clone(e.ObjectOld.GetAnnotations()), maps.Clone(e.ObjectNew.GetAnnotations())
		delete(was, notifications.StateAnnotation)
		delete(is, notifications.StateAnnotation)
		return !maps.Equal(was, is)
	}}
}
