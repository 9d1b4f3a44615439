package controller

import (
	"context"
	"log/slog"
	gosync "sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/internal/insights"
)

// Delivery metrics (docs/metrics.md, "Delivery"): what the insights
// recorder counts as it appends to the apps' logs, by the definitions of
// docs/insights.md. The counters carry an app's namespace, name and
// project, as graphcd_app_sync_total does, and are dropped with the app;
// the histograms carry the project alone.
var (
	appDeploys = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_app_deploy_total",
		Help: "Deploys of Applications: Succeeded syncs to a revision other than the app's previous deploy's.",
	}, []string{"namespace", "name", "project"})
	appDeployFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_app_deploy_failure_total",
		Help: "Deploys that failed before the next deploy: a sync ended Failed or Error, or the app turned Degraded.",
	}, []string{"namespace", "name", "project"})
	appRestores = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_app_restore_total",
		Help: "Failures that ended with the app Healthy and Synced after a Succeeded sync.",
	}, []string{"namespace", "name", "project"})
	appLeadTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_app_lead_time_seconds",
		Help:    "Lead time for changes: from the commit time of a deployed revision to the end of the sync that deployed it.",
		Buckets: []float64{60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400},
	}, []string{"project"})
	appRestoreTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_app_time_to_restore_seconds",
		Help:    "Time to restore: from the start of a failure to the app's next Healthy and Synced state after a Succeeded sync.",
		Buckets: []float64{60, 300, 900, 1800, 3600, 4 * 3600, 12 * 3600, 86400, 3 * 86400, 7 * 86400},
	}, []string{"project"})
)

func init() {
	crmetrics.Registry.MustRegister(appDeploys, appDeployFailures, appRestores, appLeadTime, appRestoreTime)
}

// insightsRecorder appends to each app's delivery log (insights.Store)
// as the app's status changes: a record per sync operation that ended,
// with the commit time of the revision it applied, and a record per
// change of the app's health or sync status. It acts on the apps of this
// controller's shard, as their only writer.
type insightsRecorder struct {
	r      *Reconciler
	client client.Client
	store  *insights.Store
	log    *slog.Logger

	mu   gosync.Mutex
	apps map[types.NamespacedName]*appLog
	// commits caches commit times by repository and revision; it is
	// emptied when it reaches maxCommitTimes.
	commits map[string]int64
}

// maxCommitTimes bounds the recorder's cache of commit times.
const maxCommitTimes = 10000

// appLog is what the recorder knows of an app's log: the state its
// records lead to and the last sync recorded (to record each once).
type appLog struct {
	t insights.Tracker
	// last identifies the last sync recorded. Times are whole seconds,
	// so two syncs may share them; their revisions or phases differ.
	last insights.Record
}

// sameSync reports whether a and b record the same sync operation.
func sameSync(a, b insights.Record) bool {
	return a.At == b.At && a.Started == b.Started && a.Phase == b.Phase && a.Revision == b.Revision
}

func newInsightsRecorder(r *Reconciler, mgr ctrl.Manager, cfg Config) (*insightsRecorder, error) {
	kc, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, err
	}
	return &insightsRecorder{
		r: r, client: mgr.GetClient(), store: &insights.Store{Client: kc, Namespace: cfg.Namespace},
		log: cfg.Logger.With("component", "insights"), apps: map[types.NamespacedName]*appLog{}, commits: map[string]int64{},
	}, nil
}

func (w *insightsRecorder) setup(mgr ctrl.Manager) error {
	// The leader watches the logs, so that neither loading an app's log
	// nor appending to it reads it from the API (insights.Store).
	err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		if err := w.store.Watch(ctx); err != nil && ctx.Err() == nil {
			w.log.WarnContext(ctx, "insights: cannot watch the logs; reading each from the API", "err", err)
		}
		<-ctx.Done()
		return nil
	}))
	if err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("insights").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: 4}).
		For(&v1alpha1.Application{}).
		Complete(w)
}

// Reconcile records what changed in the app's status since the last
// record.
func (w *insightsRecorder) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app v1alpha1.Application
	if err := w.client.Get(ctx, req.NamespacedName, &app); err != nil {
		if client.IgnoreNotFound(err) == nil {
			w.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !w.r.shardOwns(ctx, &app) {
		return ctrl.Result{}, nil
	}
	lg, err := w.logOf(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	recs := w.newRecords(ctx, &app, lg, time.Now())
	if len(recs) == 0 {
		return ctrl.Result{}, nil
	}
	info := insights.App{Namespace: app.Namespace, Name: app.Name, Project: app.ProjectName()}
	if err := w.store.Append(ctx, info, recs, time.Now()); err != nil {
		w.log.WarnContext(ctx, "insights: append to the log", "app", req.String(), "err", err)
		return ctrl.Result{}, err
	}
	for _, rec := range recs {
		w.count(info, lg.t.Step(rec))
		if rec.Kind == insights.KindSync {
			lg.last = rec
		}
	}
	return ctrl.Result{}, nil
}

// logOf returns what the recorder knows of key's log, reading the log
// when it has not yet.
func (w *insightsRecorder) logOf(ctx context.Context, key types.NamespacedName) (*appLog, error) {
	w.mu.Lock()
	lg := w.apps[key]
	w.mu.Unlock()
	if lg != nil {
		return lg, nil
	}
	recs, err := w.store.Load(ctx, insights.Key{Namespace: key.Namespace, Name: key.Name})
	if err != nil {
		// An unreadable log is started again by the next Append.
		w.log.WarnContext(ctx, "insights: read the log", "app", key.String(), "err", err)
		recs = nil
	}
	lg = &appLog{}
	for _, rec := range insights.Trim(recs, time.Now()) {
		lg.t.Step(rec)
		if rec.Kind == insights.KindSync {
			lg.last = rec
		}
	}
	w.mu.Lock()
	w.apps[key] = lg
	w.mu.Unlock()
	return lg, nil
}

// newRecords are the records app's status adds to lg: the sync that
// ended since the last one recorded, and a change of health or sync
// status, at now.
func (w *insightsRecorder) newRecords(ctx context.Context, app *v1alpha1.Application, lg *appLog, now time.Time) []insights.Record {
	var out []insights.Record
	if rec, ok := w.syncRecord(ctx, app, lg); ok {
		out = append(out, rec)
	}
	h, s := string(app.Status.Health.Status), string(app.Status.Sync.Status)
	if h != "" && s != "" && (h != lg.t.Health() || s != lg.t.Sync()) {
		at := max(now.Unix(), lg.t.Last)
		if len(out) > 0 {
			at = max(at, out[0].At)
		}
		out = append(out, insights.Record{Kind: insights.KindState, At: at, Health: h, Sync: s})
	}
	return out
}

// syncRecord is the record of app's last sync operation when it ended
// and is not recorded yet. Dry runs and syncs of local manifests deploy
// nothing and are not recorded.
func (w *insightsRecorder) syncRecord(ctx context.Context, app *v1alpha1.Application, lg *appLog) (insights.Record, bool) {
	st := app.Status.OperationState
	if st == nil || st.FinishedAt == nil || st.Operation.Sync == nil || st.Operation.Sync.DryRun || localSync(st) {
		return insights.Record{}, false
	}
	switch st.Phase {
	case v1alpha1.OperationSucceeded, v1alpha1.OperationFailed, v1alpha1.OperationError:
	default:
		return insights.Record{}, false
	}
	at, started := st.FinishedAt.Unix(), st.StartedAt.Unix()
	if at < lg.last.At {
		return insights.Record{}, false
	}
	rec := insights.Record{Kind: insights.KindSync, At: at, Started: min(started, at), Phase: string(st.Phase)}
	var src v1alpha1.ApplicationSource
	if res := st.SyncResult; res != nil {
		src, rec.Revision = res.Source, res.Revision
		if len(res.Revisions) > 0 && len(res.Sources) == len(res.Revisions) {
			src, rec.Revision = res.Sources[0], res.Revisions[0]
		}
	}
	if sameSync(rec, lg.last) {
		return insights.Record{}, false
	}
	if st.Phase == v1alpha1.OperationSucceeded {
		rec.CommitAt = w.commitTime(ctx, app, src, rec.Revision)
	}
	return rec, true
}

// commitTime is the commit time of revision rev of src's Git repository,
// 0 when it is not a Git source or the repository server cannot say.
func (w *insightsRecorder) commitTime(ctx context.Context, app *v1alpha1.Application, src v1alpha1.ApplicationSource, rev string) int64 {
	if src.RepoURL == "" || src.Chart != "" || len(rev) != 40 || w.r.opts.Repo == nil {
		return 0
	}
	key := src.RepoURL + "@" + rev
	w.mu.Lock()
	t, ok := w.commits[key]
	w.mu.Unlock()
	if ok {
		return t
	}
	proj, err := w.r.project(ctx, app)
	if err != nil || proj == nil {
		return 0
	}
	repo, err := w.r.manifests.Repository(ctx, manifests.Request{App: app, Project: proj, Source: src})
	if err != nil {
		return 0
	}
	commits, err := w.r.opts.Repo.ListCommits(ctx, repo, rev, 1)
	if err != nil || len(commits) == 0 {
		w.log.DebugContext(ctx, "insights: commit time unavailable", "app", app.Namespace+"/"+app.Name, "revision", rev, "err", err)
		return 0
	}
	t = commits[0].Date.Unix()
	w.mu.Lock()
	if len(w.commits) >= maxCommitTimes {
		clear(w.commits)
	}
	w.commits[key] = t
	w.mu.Unlock()
	return t
}

// count adds what one record meant to the delivery metrics.
func (w *insightsRecorder) count(app insights.App, o insights.Outcome) {
	if o.Deploy {
		appDeploys.WithLabelValues(app.Namespace, app.Name, app.Project).Inc()
		if o.LeadTime >= 0 {
			appLeadTime.WithLabelValues(app.Project).Observe(float64(o.LeadTime))
		}
	}
	if o.DeployFailed {
		appDeployFailures.WithLabelValues(app.Namespace, app.Name, app.Project).Inc()
	}
	if o.Restored {
		appRestores.WithLabelValues(app.Namespace, app.Name, app.Project).Inc()
		appRestoreTime.WithLabelValues(app.Project).Observe(float64(o.RestoreTime))
	}
}

// forget drops what the recorder holds of a deleted app, and its
// counters' series. Its log stays for the installation's and project's
// insights, and ages out with the retention.
func (w *insightsRecorder) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.apps, key)
	w.mu.Unlock()
	labels := prometheus.Labels{"namespace": key.Namespace, "name": key.Name}
	for _, c := range []*prometheus.CounterVec{appDeploys, appDeployFailures, appRestores} {
		c.DeletePartialMatch(labels)
	}
}

// DeliveryCollectors are the delivery metrics, for a process that serves
// the controller's metrics from a registry of its own (graphcd server).
func DeliveryCollectors() []prometheus.Collector {
	return []prometheus.Collector{appDeploys, appDeployFailures, appRestores, appLeadTime, appRestoreTime}
}
