package controller

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
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
	mgr, err := ctrl.NewManager(cfg.RESTConfig, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache: crcache.Options{
			DefaultNamespaces: map[string]crcache.Config{cfg.Namespace: {}},
			// Of the ConfigMaps only graphcd-cm is watched and cached.
			ByObject: map[client.Object]crcache.ByObject{
				&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", SettingsConfigMap)},
			},
		},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("controller manager: %w", err)
	}
	r, err := NewReconciler(mgr.GetClient(), Options{
		Repo: cfg.Repo, Live: live, Settings: cfg.Settings, Resync: cfg.Resync, RepoFor: cfg.RepoFor, Logger: cfg.Logger,
		Recorder: mgr.GetEventRecorder("graphcd-controller"), Shard: cfg.Shard,
	})
	if err != nil {
		return nil, err
	}
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
	return &Controller{cfg: cfg, live: live, mgr: mgr, reconciler: r, owned: cfg.Shard.Owns(InClusterServer)}, nil
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

// Run starts the cluster cache, when the shard owns the cluster, then the
// reconciler, and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !c.owned {
		c.cfg.Logger.Info("shard owns no destination cluster: no cluster cache, no reconciles", "shard", c.cfg.Shard.String())
		return c.mgr.Start(ctx)
	}
	if err := c.live.Start(ctx); err != nil {
		return fmt.Errorf("start cluster cache: %w", err)
	}
	return c.mgr.Start(ctx)
}
