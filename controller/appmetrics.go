package controller

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/types"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/argocdmetrics"
)

// The Application families mirror Argo CD's application controller
// metrics: the same names after the prefix, the same labels, the same
// meanings. They are graphcd_<name>, and also argocd_<name> in Argo CD
// compatibility mode (Config.MetricsArgoCDNames), so that dashboards and
// alerts written for Argo CD work unchanged. docs/metrics.md documents
// each label and what bounds it.
const metricsPrefix = argocdmetrics.Prefix

// family is one metric family: its name after the prefix, help and labels.
type family struct {
	name, help string
	labels     []string

	order  sync.Once
	byName []int
}

func (f *family) desc(prefix string) *prometheus.Desc {
	return prometheus.NewDesc(prefix+f.name, f.help, f.labels, nil)
}

// maxLabels is the most labels a family computed at scrape time has.
const maxLabels = 10

// gauge is one series of 1 of family f with label values in f.labels'
// order. It is a prometheus.Metric built in one allocation, its label
// pairs already in the name order exposition wants: a scrape at 10,000
// apps makes tens of thousands of them, and prometheus.MustNewConstMetric
// would allocate and sort each label pair apart.
func (f *family) gauge(desc *prometheus.Desc, values ...string) *series {
	s := &series{desc: desc, value: 1}
	s.gauge.Value = &s.value
	order := f.sorted()
	for i, at := range order {
		s.values[i] = values[at]
		s.pairs[i] = dto.LabelPair{Name: &f.labels[at], Value: &s.values[i]}
		s.labels[i] = &s.pairs[i]
	}
	s.n = len(order)
	return s
}

// sorted is the order of f's labels by name, as indexes into f.labels.
func (f *family) sorted() []int {
	f.order.Do(func() {
		f.byName = make([]int, len(f.labels))
		for i := range f.byName {
			f.byName[i] = i
		}
		slices.SortFunc(f.byName, func(a, b int) int { return strings.Compare(f.labels[a], f.labels[b]) })
	})
	return f.byName
}

// series is a gauge's series; see family.gauge.
type series struct {
	desc   *prometheus.Desc
	n      int
	values [maxLabels]string
	pairs  [maxLabels]dto.LabelPair
	labels [maxLabels]*dto.LabelPair
	value  float64
	gauge  dto.Gauge
}

// Desc implements prometheus.Metric.
func (s *series) Desc() *prometheus.Desc { return s.desc }

// Write implements prometheus.Metric.
func (s *series) Write(out *dto.Metric) error {
	out.Label, out.Gauge = s.labels[:s.n], &s.gauge
	return nil
}

var (
	appInfoFamily = &family{name: "app_info",
		help:   "Information about Applications: 1 per app this controller reconciles, labelled with its sync status, health, project and destination.",
		labels: []string{"namespace", "name", "project", "autosync_enabled", "repo", "dest_server", "dest_namespace", "sync_status", "health_status", "operation"}}
	appConditionFamily = &family{name: "app_condition",
		help:   "The conditions present in an Application's status: 1 per app and condition type.",
		labels: []string{"namespace", "name", "project", "condition"}}
	appSyncFamily = &family{name: "app_sync_total",
		help:   "Sync operations that ended, by app and final phase (Succeeded, Failed, Error).",
		labels: []string{"namespace", "name", "project", "dest_server", "phase", "dry_run"}}
	appReconcileFamily = &family{name: "app_reconcile",
		help:   "How long reconciles of Applications took, in seconds, by app namespace and destination server.",
		labels: []string{"namespace", "dest_server"}}
	clusterInfoFamily = &family{name: "cluster_info",
		help:   "Information about the destination clusters whose caches this controller runs: 1 per cluster, labelled with its Kubernetes version.",
		labels: []string{"server", "name", "k8s_version"}}
)

var (
	appSyncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricsPrefix + appSyncFamily.name, Help: appSyncFamily.help,
	}, appSyncFamily.labels)
	// The buckets are Argo CD's, so that its dashboards' quantiles read
	// the same.
	appReconcileSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: metricsPrefix + appReconcileFamily.name, Help: appReconcileFamily.help,
		Buckets: []float64{0.25, 0.5, 1, 2, 4, 8, 16},
	}, appReconcileFamily.labels)
	apps = newAppCollector(metricsPrefix)
)

func init() {
	crmetrics.Registry.MustRegister(apps, appSyncs, appReconcileSeconds, appK8sRequests, clusterMetrics)
	// The metrics server of controller-runtime reads the registry when it
	// starts, after this.
	crmetrics.Registry = argocdmetrics.Wrap(crmetrics.Registry, &argoCDNames)
}

// argoCDNames turns on the argocd_ twins of controller-runtime's
// registry, which init wraps: once on, for the rest of the process.
var argoCDNames atomic.Bool

// serveArgoCDNames serves the argocd_ twins of the families in
// controller-runtime's registry, for the rest of the process.
func serveArgoCDNames() { argoCDNames.Store(true) }

// MetricsCollectors are the controller's families, for a process that
// serves a registry of its own rather than controller-runtime's: graphcd
// server with its controller in process. That process serves their
// argocd_ twins with an argocdmetrics.Gatherer.
func MetricsCollectors() []prometheus.Collector {
	return []prometheus.Collector{apps, appSyncs, appReconcileSeconds, appK8sRequests, clusterMetrics}
}

// countSync counts a sync operation that ended, in phase st.Phase.
func countSync(app *v1alpha1.Application, st *v1alpha1.OperationState) {
	if st.Operation.Sync == nil {
		return
	}
	appSyncs.WithLabelValues(app.Namespace, app.Name, app.ProjectName(), app.Spec.Destination.Server,
		string(st.Phase), strconv.FormatBool(st.Operation.Sync.DryRun)).Inc()
}

// forgetSyncs drops the sync and request counts of an app that is gone,
// so that the counters' series stay bounded by the apps that exist.
func forgetSyncs(app types.NamespacedName) {
	appSyncs.DeletePartialMatch(prometheus.Labels{"namespace": app.Namespace, "name": app.Name})
	appK8sRequests.forget(app.Namespace, app.Name)
}

// metricsSource is a controller whose apps and clusters the collector
// reports.
type metricsSource interface {
	// eachApp calls fn with every app the source reconciles; fn must not
	// keep or change it.
	eachApp(ctx context.Context, fn func(*v1alpha1.Application))
	// eachCluster calls fn with every destination cluster whose cache runs.
	eachCluster(fn func(server, name, version string))
}

// appCollector computes app_info, app_condition and cluster_info at scrape
// time from its sources' caches, so a deleted app leaves no series behind.
type appCollector struct {
	info, condition, cluster *prometheus.Desc

	mu      sync.Mutex
	sources map[metricsSource]struct{}
}

func newAppCollector(prefix string) *appCollector {
	return &appCollector{
		info: appInfoFamily.desc(prefix), condition: appConditionFamily.desc(prefix), cluster: clusterInfoFamily.desc(prefix),
		sources: map[metricsSource]struct{}{},
	}
}

// add makes s reported until the returned function is called.
func (c *appCollector) add(s metricsSource) (remove func()) {
	c.mu.Lock()
	c.sources[s] = struct{}{}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.sources, s)
		c.mu.Unlock()
	}
}

// Describe implements prometheus.Collector.
func (c *appCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.info
	ch <- c.condition
	ch <- c.cluster
}

// Collect implements prometheus.Collector. A process normally runs one
// controller; when it runs several (tests), an app or cluster two of them
// see is reported once.
func (c *appCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	sources := make([]metricsSource, 0, len(c.sources))
	for s := range c.sources {
		sources = append(sources, s)
	}
	c.mu.Unlock()
	var seenApps map[types.NamespacedName]bool
	seenClusters := map[string]bool{}
	if len(sources) > 1 {
		seenApps = map[types.NamespacedName]bool{}
	}
	ctx := context.Background()
	for _, s := range sources {
		s.eachApp(ctx, func(app *v1alpha1.Application) {
			if seenApps != nil {
				key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
				if seenApps[key] {
					return
				}
				seenApps[key] = true
			}
			c.collectApp(ch, app)
		})
		s.eachCluster(func(server, name, version string) {
			if !seenClusters[server] {
				seenClusters[server] = true
				ch <- clusterInfoFamily.gauge(c.cluster, server, name, version)
			}
		})
	}
}

// collectApp sends app's app_info and app_condition series.
func (c *appCollector) collectApp(ch chan<- prometheus.Metric, app *v1alpha1.Application) {
	project := app.ProjectName()
	ch <- appInfoFamily.gauge(c.info,
		app.Namespace, app.Name, project, strconv.FormatBool(automated(app) != nil), repoOf(app),
		app.Spec.Destination.Server, app.Spec.Destination.Namespace,
		string(app.Status.Sync.Status), string(app.Status.Health.Status), operationOf(app))
	conds := app.Status.Conditions
	for i, cond := range conds {
		if firstOfType(conds[:i], cond.Type) {
			ch <- appConditionFamily.gauge(c.condition, app.Namespace, app.Name, project, string(cond.Type))
		}
	}
}

// firstOfType reports whether none of before has type typ: an app with
// two conditions of a type has one series.
func firstOfType(before []v1alpha1.ApplicationCondition, typ v1alpha1.ApplicationConditionType) bool {
	for _, c := range before {
		if c.Type == typ {
			return false
		}
	}
	return true
}

// repoOf is the repository of the app's first source (the dry source of
// a source hydrator), as Argo CD's repo label is.
func repoOf(app *v1alpha1.Application) string {
	s := &app.Spec
	switch {
	case s.SourceHydrator != nil:
		return s.SourceHydrator.DrySource.RepoURL
	case len(s.Sources) > 0:
		return s.Sources[0].RepoURL
	case s.Source != nil:
		return s.Source.RepoURL
	}
	return ""
}

// operationOf is the operation label: "delete" while the app is being
// deleted, "sync" while a sync is requested or runs, else "".
func operationOf(app *v1alpha1.Application) string {
	switch {
	case app.DeletionTimestamp != nil:
		return "delete"
	case app.Operation != nil && app.Operation.Sync != nil:
		return "sync"
	}
	return ""
}

// eachApp implements metricsSource: the apps in the manager's cache that
// this controller's shard has claimed, read without copies.
func (c *Controller) eachApp(ctx context.Context, fn func(*v1alpha1.Application)) {
	r := c.reconciler
	// A scrape while the cache syncs waits for it, not for ever.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var list v1alpha1.ApplicationList
	if err := r.client.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		// Before the manager starts there is nothing to report yet.
		if !errors.As(err, new(*crcache.ErrCacheNotStarted)) {
			r.log.Warn("list Applications for metrics", "err", err)
		}
		return
	}
	r.reportApps(list.Items, fn)
}

// reportApps calls fn with the apps of items this reconciler serves and
// its shard has claimed.
func (r *Reconciler) reportApps(items []v1alpha1.Application, fn func(*v1alpha1.Application)) {
	for i := range items {
		app := &items[i]
		if r.opts.AppNamespaces.Allowed(app.Namespace) && r.memory.claimedApp(types.NamespacedName{Namespace: app.Namespace, Name: app.Name}) {
			fn(app)
		}
	}
}

// eachCluster implements metricsSource: the clusters whose caches were
// started, with the version their discovery reported ("" for one whose
// cache failed to start).
func (c *Controller) eachCluster(fn func(server, name, version string)) {
	for _, st := range c.clusters.states() {
		if st.attempted.IsZero() {
			continue
		}
		version := ""
		if st.cache != nil {
			version, _ = st.cache.Capabilities()
		}
		fn(st.server, st.name, version)
	}
}
