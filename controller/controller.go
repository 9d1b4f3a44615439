package controller

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/statusboard"
	"github.com/graphcd/graphcd/reposerver"
)

// Config assembles a Controller.
type Config struct {
	// RESTConfig reaches the management cluster: its Applications, its
	// cluster Secrets, and the destination in-cluster. Its QPS and Burst
	// apply to every destination cluster's clients too.
	RESTConfig *rest.Config
	// Namespace is graphcd's namespace: its settings, AppProjects,
	// repository and cluster Secrets, and the Applications it reconciles.
	Namespace string
	// AppNamespaces adds the namespaces matching --application-namespaces
	// to Namespace for Applications (see project.CompileAppNamespaces);
	// nil reconciles those of Namespace only.
	AppNamespaces *project.AppNamespaces
	// Forges say which forge APIs ApplicationSets' SCM provider and pull
	// request generators may call.
	Forges   appset.ForgePolicy
	Repo     reposerver.Service
	Settings *settings.Settings
	Resync   time.Duration
	// Events bounds the Kubernetes Events recorded; the zero value
	// records them all.
	Events EventBudget
	// Processors is how many apps are reconciled at once (default
	// DefaultProcessors).
	Processors int
	RepoFor    func(ctx context.Context, url, project string) (reposerver.Repository, error)
	// WriteRepoFor and Committer serve the source hydrator (see
	// Options.WriteRepoFor); without both, hydration is off.
	WriteRepoFor func(ctx context.Context, url, project string) (reposerver.Repository, error)
	Committer    Committer
	Logger       *slog.Logger
	// Shard selects the destination clusters this controller reconciles
	// (see ShardOf and Shard.OwnsCluster); the zero Shard owns them all. A
	// shard runs caches only for the clusters it owns.
	Shard Shard
	// LeaderElection, when enabled, lets only one replica of the shard
	// reconcile at a time.
	LeaderElection LeaderElection
	// MetricsListen is the address that serves /metrics (controller-runtime's
	// registry, graphcd_* metrics included) and /healthz; "" or "0" serves
	// nothing.
	MetricsListen string
	// MetricsArgoCDNames serves the Application metric families under
	// Argo CD's names too (argocd_app_info ...), for the rest of the
	// process; see docs/metrics.md.
	MetricsArgoCDNames bool
	// SyncWaveDelay is the pause between the waves of a sync (2 s when
	// zero, none when negative); SyncPollInterval is how often a running
	// sync is looked at (2 s when zero). See controller/sync.
	SyncWaveDelay    time.Duration
	SyncPollInterval time.Duration
	// State receives each app's resource tree and managed resources (live
	// and desired YAML, masked diffs) for the API servers; nil writes none.
	State appstate.Store
	// Watch is the process's watch of the settings objects, through which
	// graphcd-cm is followed; nil makes one for the controller alone.
	Watch *kubewatch.Source
	// Clusters is the process's registry of destination clusters, shared
	// with the API; nil makes one for the controller alone.
	Clusters *clusters.Registry
	// Status receives the controller's heartbeat and, from the shard's
	// leader, the state of its clusters (see internal/statusboard); nil
	// publishes nothing.
	Status statusboard.Board
	// Memory admits the comparisons: under memory pressure they run one
	// at a time (see internal/memguard), and the heartbeat shows it; nil
	// admits all at once.
	Memory *memguard.Guard
	// DisableNotifications turns notification delivery off. Otherwise the
	// controller delivers notifications whenever a notifications ConfigMap
	// exists in Namespace (see docs/notifications.md).
	DisableNotifications bool
}

// Controller runs the destination clusters' caches and the Application
// reconciler.
type Controller struct {
	cfg        Config
	clusters   *clusterSet
	mgr        ctrl.Manager
	reconciler *Reconciler
}

// DefaultProcessors is how many apps a controller reconciles at once
// unless told otherwise.
const DefaultProcessors = 10

// New builds a Controller; Run starts it.
func New(cfg Config) (*Controller, error) {
	if cfg.Settings == nil {
		s, err := settings.Parse(nil)
		if err != nil {
			return nil, err
		}
		cfg.Settings = s
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := cfg.Shard.Validate(); err != nil {
		return nil, err
	}
	if cfg.Shard.Dynamic {
		cfg.Shard.live = newLiveCount(cfg.Shard)
	}
	cfg.Shard.followOrder()
	if cfg.AppNamespaces == nil {
		own, err := project.CompileAppNamespaces(cfg.Namespace, nil)
		if err != nil {
			return nil, err
		}
		cfg.AppNamespaces = own
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	mopts := ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsOptions(cfg.MetricsListen),
		Cache: crcache.Options{
			// Nothing the controller does reads managedFields, and every
			// shard holds every Application: it keeps them without, as the
			// API's catalog does.
			DefaultTransform:  crcache.TransformStripManagedFields(),
			DefaultNamespaces: map[string]crcache.Config{cfg.Namespace: {}},
			ByObject: map[client.Object]crcache.ByObject{
				&v1alpha1.Application{}:    {Namespaces: appCacheNamespaces(cfg.AppNamespaces)},
				&v1alpha1.ApplicationSet{}: {Namespaces: appCacheNamespaces(cfg.AppNamespaces)},
			},
		},
		HealthProbeBindAddress: "0",
		// Several Controllers may run in one process (tests, a restart in
		// place); their controllers share names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if cfg.LeaderElection.Enabled {
		var err error
		if cfg.LeaderElection, err = cfg.LeaderElection.configure(&mopts, cfg.RESTConfig, cfg.Namespace, cfg.Shard.Index); err != nil {
			return nil, err
		}
	}
	if cfg.MetricsArgoCDNames {
		serveArgoCDNames()
	}
	mgr, err := ctrl.NewManager(cfg.RESTConfig, mopts)
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	c := &Controller{cfg: cfg, mgr: mgr}
	if c.clusters, err = c.newClusterSet(); err != nil {
		return nil, err
	}
	// Controllers need leader election, and so does the cluster set: a
	// standby runs no informers and writes nothing.
	if err := mgr.Add(c.clusters); err != nil {
		return nil, err
	}
	if err := c.addStatusPublisher(mgr, cfg.Status); err != nil {
		return nil, err
	}
	if cfg.Shard.Dynamic {
		counter := &shardCounter{reader: mgr.GetAPIReader(), namespace: cfg.Namespace, shard: cfg.Shard,
			every: shardPoll, grace: max(4*cfg.LeaderElection.LeaseDuration, time.Minute), changed: c.clusters.reshard, log: cfg.Logger}
		if err := mgr.Add(counter); err != nil {
			return nil, err
		}
	}
	if cfg.LeaderElection.Enabled {
		if err := mgr.Add(&leading{lease: cfg.Namespace + "/" + LeaseName(cfg.Shard.Index), identity: cfg.LeaderElection.Identity, log: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	budget := newBudgetedEvents(cfg.Events, cfg.Logger)
	meta, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return nil, err
	}
	r, err := NewReconciler(mgr.GetClient(), Options{
		Repo: cfg.Repo, Settings: cfg.Settings, Resync: cfg.Resync, RepoFor: cfg.RepoFor, Logger: cfg.Logger,
		WriteRepoFor: cfg.WriteRepoFor, Committer: cfg.Committer,
		Recorder: budget.recorder(mgr.GetEventRecorder("graphcd-controller")), Shard: cfg.Shard,
		Sync:      SyncConfig{WaveDelay: cfg.SyncWaveDelay, PollInterval: cfg.SyncPollInterval},
		APIReader: mgr.GetAPIReader(), Metadata: meta, State: cfg.State, AppNamespaces: cfg.AppNamespaces,
		Memory: cfg.Memory,
	})
	if err != nil {
		return nil, err
	}
	r.dests = c.clusters
	c.reconciler = r
	if cfg.Processors <= 0 {
		cfg.Processors = DefaultProcessors
	}
	if err := r.SetupWithManager(mgr, cfg.Processors); err != nil {
		return nil, err
	}
	// ApplicationSets are generated by the first shard alone: they write
	// Applications, which every shard then reconciles.
	if cfg.Shard.Index == 0 {
		sets := appset.NewReconciler(mgr.GetClient(), appset.Options{
			Namespace: cfg.Namespace, AppNamespaces: cfg.AppNamespaces, Clusters: c.clusters.reg, ClustersLoaded: c.clusters.loaded(),
			Repo: cfg.Repo, RepoFor: cfg.RepoFor, APIReader: mgr.GetAPIReader(),
			Recorder: budget.recorder(mgr.GetEventRecorder("graphcd-applicationset-controller")), Logger: cfg.Logger, Forges: cfg.Forges,
		})
		if err := sets.SetupWithManager(context.Background(), mgr); err != nil {
			return nil, err
		}
	}
	watch := &settingsWatch{client: mgr.GetClient(), r: r, namespace: cfg.Namespace, base: cfg.Settings, log: cfg.Logger,
		watch: cfg.Watch, restConfig: cfg.RESTConfig}
	if err := watch.setup(mgr); err != nil {
		return nil, err
	}
	if !cfg.DisableNotifications {
		if err := newNotifier(r, mgr, cfg, budget.recorder(mgr.GetEventRecorder("graphcd-notifications"))).setup(mgr); err != nil {
			return nil, err
		}
	}
	rec, err := newInsightsRecorder(r, mgr, cfg)
	if err != nil {
		return nil, err
	}
	if err := rec.setup(mgr); err != nil {
		return nil, err
	}
	return c, nil
}

// appCacheNamespaces are the namespaces whose Applications the manager's
// cache holds: those named, or every namespace when a pattern is a glob
// or an expression (the reconciler then ignores the others).
func appCacheNamespaces(ns *project.AppNamespaces) map[string]crcache.Config {
	watch := ns.Watch()
	if watch == nil {
		return map[string]crcache.Config{metav1.NamespaceAll: {}}
	}
	out := make(map[string]crcache.Config, len(watch))
	for _, n := range watch {
		out[n] = crcache.Config{}
	}
	return out
}

// newClusterSet builds the cluster registry over the cluster Secrets of
// the controller's namespace and the (not yet started) in-cluster cache.
func (c *Controller) newClusterSet() (*clusterSet, error) {
	cfg := c.cfg
	reg := cfg.Clusters
	if reg == nil {
		kc, err := kubernetes.NewForConfig(cfg.RESTConfig)
		if err != nil {
			return nil, fmt.Errorf("cluster registry client: %w", err)
		}
		if reg, err = clusters.New(clusters.Options{Client: kc, Namespace: cfg.Namespace, InCluster: cfg.RESTConfig, Logger: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	set := &clusterSet{
		reg: reg, shard: cfg.Shard, log: cfg.Logger, qps: cfg.RESTConfig.QPS, burst: cfg.RESTConfig.Burst,
		newCache: c.newCache, changed: c.refreshCluster,
		ready: make(chan struct{}), conns: map[string]*conn{},
	}
	// The in-cluster cache exists from the start, so that Live never
	// returns nil; it runs only when the shard owns the cluster.
	cn, err := set.newConn(&clusters.Cluster{Name: InClusterName, Server: InClusterServer, RESTConfig: cfg.RESTConfig})
	if err != nil {
		return nil, err
	}
	set.conns[InClusterServer] = cn
	return set, nil
}

// newCache builds the cache of cluster cl, limited to the namespaces its
// Secret allows. Its events refresh the apps of that cluster only: live
// objects name their app by the instance label, and apps on other
// clusters may track objects of the same name.
func (c *Controller) newCache(cl *clusters.Cluster, rc *rest.Config) (*cache.Cluster, error) {
	s, server := c.cfg.Settings, cl.Server
	live, err := cache.New(cache.Options{
		Config: rc, ClusterURL: server, Namespaces: cl.Namespaces, ClusterResources: cl.ClusterResources,
		TrackingMethod: s.TrackingMethod, InstanceLabelKey: s.InstanceLabelKey,
		Exclusions: s.Exclusions, Inclusions: s.Inclusions, Logger: c.cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	// A change to a live object refreshes only the app that owns it,
	// named by its instance name (see cache.InstanceName).
	live.OnChange(func(instance string, _ ResourceKey) {
		ns, app := cache.AppOfInstance(instance, c.cfg.AppNamespaces.Own())
		name := types.NamespacedName{Namespace: ns, Name: app}
		if c.cfg.AppNamespaces.Allowed(ns) && c.reconciler.memory.onCluster(name, server) {
			c.reconciler.broker.publish(Event{App: name, Type: EventResourceChanged})
			c.reconciler.Refresh(name)
		}
	})
	// An untracked object in a namespace refreshes the apps whose project
	// monitors orphans there.
	live.OnOrphanChange(func(key ResourceKey) {
		for _, name := range c.reconciler.orphans.watchers(key.Namespace) {
			if c.reconciler.memory.onCluster(name, server) {
				c.reconciler.Refresh(name)
			}
		}
	})
	return live, nil
}

// refreshCluster refreshes the apps whose destination is the cluster at
// server, by server or by one of names (the cluster's names before and
// after its Secret changed).
func (c *Controller) refreshCluster(ctx context.Context, server string, names []string) {
	apps, err := c.reconciler.listApps(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.cfg.Logger.Warn("list the apps of a changed cluster", "server", server, "err", err)
		}
		return
	}
	for _, app := range apps {
		d := app.Spec.Destination
		hit := d.Server != "" && secretcodec.NormaliseServer(d.Server) == server
		hit = hit || (d.Name != "" && slices.Contains(names, d.Name))
		if hit {
			if err := c.reconciler.refreshWait(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}); err != nil {
				return
			}
		}
	}
}

// Reconciler exposes the reconciler (its in-memory state) to the API.
func (c *Controller) Reconciler() *Reconciler { return c.reconciler }

// Subscribe streams the reconciliation events of every app; see
// Reconciler.Subscribe.
func (c *Controller) Subscribe(ctx context.Context, buffer int) <-chan Event {
	return c.reconciler.Subscribe(ctx, buffer)
}

// Live exposes the in-cluster cache (resource trees) to the API. It is
// never nil; on a shard that does not own in-cluster it stays empty.
func (c *Controller) Live() *cache.Cluster {
	c.clusters.mu.Lock()
	defer c.clusters.mu.Unlock()
	return c.clusters.inCluster
}

// LiveFor returns the cache of the destination cluster whose API server
// is server, nil when this controller runs none for it (a cluster no
// owned app has targeted yet, or one of another shard).
func (c *Controller) LiveFor(server string) *cache.Cluster { return c.clusters.live(server) }

// Run starts the controller and blocks until ctx ends. With leader
// election it first waits for the shard's Lease; the leader then loads the
// cluster Secrets, starts the in-cluster cache (when the shard owns that
// cluster) and the reconciler, whose reconciles start the cache of an
// app's cluster on first use and wait for its initial state. A leader that loses its
// Lease stops with an error: the process should exit, and a standby takes
// over.
func (c *Controller) Run(ctx context.Context) error {
	attrs := []any{"shard", c.cfg.Shard.String(), "leader-election", c.cfg.LeaderElection.Enabled}
	if c.cfg.LeaderElection.Enabled {
		attrs = append(attrs, "lease", c.cfg.Namespace+"/"+LeaseName(c.cfg.Shard.Index), "identity", c.cfg.LeaderElection.Identity)
	}
	c.cfg.Logger.Info("application controller running", attrs...)
	if err := c.ensureDefaultProject(ctx); err != nil {
		c.cfg.Logger.Warn("create the default AppProject", "namespace", c.cfg.Namespace, "err", err)
	}
	defer apps.add(c)()
	defer clusterMetrics.add(c)()
	return c.mgr.Start(ctx)
}

// ensureDefaultProject creates the default AppProject in the controller's
// namespace when it does not exist, as Argo CD does: applications that
// name no project belong to it.
func (c *Controller) ensureDefaultProject(ctx context.Context) error {
	proj := project.DefaultProject()
	proj.Namespace = c.cfg.Namespace
	if err := c.mgr.GetClient().Create(ctx, proj); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// metricsOptions serves controller-runtime's metrics registry, with
// /healthz beside it, on addr ("" or "0": not at all).
func metricsOptions(addr string) metricsserver.Options {
	if addr == "" || addr == "0" {
		return metricsserver.Options{BindAddress: "0"}
	}
	return metricsserver.Options{BindAddress: addr, ExtraHandlers: map[string]http.Handler{
		"/healthz": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = w.Write([]byte("ok\n"))
		}),
	}}
}
