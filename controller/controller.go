package controller

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/reposerver"
)

// Config assembles a Controller.
type Config struct {
	// RESTConfig reaches the management cluster, which is also the only
	// destination cluster so far (in-cluster).
	RESTConfig *rest.Config
	// Namespace holds the Applications the controller reconciles.
	Namespace string
	Repo      reposerver.Service
	Settings  *settings.Settings
	Resync    time.Duration
	// Processors is how many apps are reconciled at once (default 10).
	Processors int
	RepoFor    func(ctx context.Context, url string) (reposerver.Repository, error)
	Logger     *slog.Logger
	// Shard selects the destination clusters this controller reconciles
	// (see ShardOf); the zero Shard owns them all. A shard that owns no
	// cluster starts no cluster cache.
	Shard Shard
	// LeaderElection, when enabled, lets only one replica of the shard
	// reconcile at a time.
	LeaderElection LeaderElection
	// MetricsListen is the address that serves /metrics (controller-runtime's
	// registry, graphcd_* metrics included) and /healthz; "" or "0" serves
	// nothing.
	MetricsListen string
	// SyncWaveDelay is the pause between the waves of a sync (2 s when
	// zero, none when negative); SyncPollInterval is how often a running
	// sync is looked at (2 s when zero). See controller/sync.
	SyncWaveDelay    time.Duration
	SyncPollInterval time.Duration
}

// Controller runs the cluster cache and the Application reconciler.
type Controller struct {
	cfg        Config
	live       *cache.Cluster
	mgr        ctrl.Manager
	reconciler *Reconciler
	// owned says whether the shard owns the in-cluster destination, so
	// whether the cluster cache runs.
	owned bool
}

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
	live, err := cache.New(cache.Options{
		Config: cfg.RESTConfig, ClusterURL: InClusterServer,
		TrackingMethod: cfg.Settings.TrackingMethod, InstanceLabelKey: cfg.Settings.InstanceLabelKey,
		Exclusions: cfg.Settings.Exclusions, Inclusions: cfg.Settings.Inclusions, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster cache: %w", err)
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
			DefaultNamespaces: map[string]crcache.Config{cfg.Namespace: {}},
			// Of the ConfigMaps only graphcd-cm is watched and cached.
			ByObject: map[client.Object]crcache.ByObject{
				&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", SettingsConfigMap)},
			},
		},
		HealthProbeBindAddress: "0",
		// Several Controllers may run in one process (tests, a restart in
		// place); their controllers share names.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if cfg.LeaderElection.Enabled {
		if cfg.LeaderElection, err = cfg.LeaderElection.configure(&mopts, cfg.RESTConfig, cfg.Namespace, cfg.Shard.Index); err != nil {
			return nil, err
		}
	}
	mgr, err := ctrl.NewManager(cfg.RESTConfig, mopts)
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	c := &Controller{cfg: cfg, live: live, mgr: mgr, owned: cfg.Shard.Owns(InClusterServer)}
	// Controllers need leader election, and so do these: a standby runs
	// no informers and writes nothing.
	var liveReady chan struct{}
	if c.owned {
		liveReady = make(chan struct{})
		if err := mgr.Add(&liveCache{cluster: live, server: InClusterServer, ready: liveReady, log: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	if cfg.LeaderElection.Enabled {
		if err := mgr.Add(&leading{lease: cfg.Namespace + "/" + LeaseName(cfg.Shard.Index), identity: cfg.LeaderElection.Identity, log: cfg.Logger}); err != nil {
			return nil, err
		}
	}
	syncCfg, err := syncConfig(cfg)
	if err != nil {
		return nil, err
	}
	r, err := NewReconciler(mgr.GetClient(), Options{
		Repo: cfg.Repo, Live: live, Settings: cfg.Settings, Resync: cfg.Resync, RepoFor: cfg.RepoFor, Logger: cfg.Logger,
		Recorder: mgr.GetEventRecorder("graphcd-controller"), Shard: cfg.Shard, LiveReady: liveReady,
		Sync: syncCfg, APIReader: mgr.GetAPIReader(),
	})
	if err != nil {
		return nil, err
	}
	c.reconciler = r
	if cfg.Processors <= 0 {
		cfg.Processors = 10
	}
	if err := r.SetupWithManager(mgr, cfg.Processors); err != nil {
		return nil, err
	}
	watch := &settingsWatch{client: mgr.GetClient(), r: r, namespace: cfg.Namespace, base: cfg.Settings, log: cfg.Logger}
	if err := watch.setup(mgr); err != nil {
		return nil, err
	}
	// A change to a live object refreshes only the app that owns it.
	live.OnChange(func(app string, _ ResourceKey) {
		name := types.NamespacedName{Namespace: cfg.Namespace, Name: app}
		r.broker.publish(Event{App: name, Type: EventResourceChanged})
		r.Refresh(name)
	})
	// An untracked object in a namespace refreshes the apps whose project
	// monitors orphans there.
	live.OnOrphanChange(func(key ResourceKey) {
		for _, name := range r.orphans.watchers(key.Namespace) {
			r.Refresh(name)
		}
	})
	return c, nil
}

// Reconciler exposes the reconciler (its in-memory state) to the API.
func (c *Controller) Reconciler() *Reconciler { return c.reconciler }

// Subscribe streams the reconciliation events of every app; see
// Reconciler.Subscribe.
func (c *Controller) Subscribe(ctx context.Context, buffer int) <-chan Event {
	return c.reconciler.Subscribe(ctx, buffer)
}

// Live exposes the cluster cache (resource trees) to the API.
func (c *Controller) Live() *cache.Cluster { return c.live }

// Run starts the controller and blocks until ctx ends. With leader
// election it first waits for the shard's Lease; the leader then starts the
// cluster cache (when the shard owns the cluster) and the reconciler, whose
// reconciles wait for the cache's initial state. A leader that loses its
// Lease stops with an error: the process should exit, and a standby takes
// over.
func (c *Controller) Run(ctx context.Context) error {
	attrs := []any{"shard", c.cfg.Shard.String(), "leader-election", c.cfg.LeaderElection.Enabled}
	if c.cfg.LeaderElection.Enabled {
		attrs = append(attrs, "lease", c.cfg.Namespace+"/"+LeaseName(c.cfg.Shard.Index), "identity", c.cfg.LeaderElection.Identity)
	}
	if !c.owned {
		attrs = append(attrs, "note", "the shard owns no destination cluster: no cluster cache, no reconciles")
	}
	c.cfg.Logger.Info("application controller running", attrs...)
	if err := c.ensureDefaultProject(ctx); err != nil {
		c.cfg.Logger.Warn("create the default AppProject", "namespace", c.cfg.Namespace, "err", err)
	}
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

// syncConfig builds the sync executor's way to the (in-cluster)
// destination: a dynamic client and a discovery REST mapper that looks
// again when it meets a kind it does not know.
func syncConfig(cfg Config) (SyncConfig, error) {
	dyn, err := dynamic.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return SyncConfig{}, fmt.Errorf("sync client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg.RESTConfig)
	if err != nil {
		return SyncConfig{}, fmt.Errorf("sync discovery client: %w", err)
	}
	return SyncConfig{
		Client: dyn, Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		WaveDelay: cfg.SyncWaveDelay, PollInterval: cfg.SyncPollInterval,
	}, nil
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
