package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	gosync "sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/health"
	appsync "github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// SettingsConfigMap is the name of the settings ConfigMap, in the
// controller's namespace.
const SettingsConfigMap = wellknown.SettingsConfigMap

// engines are the settings and what is built from them; the reconciler
// swaps them as one pointer, so a comparison never mixes two versions.
type engines struct {
	settings *settings.Settings
	health   *health.Engine
	// pace is the wave delay and poll interval of syncs.
	pace SyncConfig

	// execs run sync operations with the same health checks, one per
	// destination cluster and user the syncs act as (see syncAccount),
	// built on first use.
	mu    gosync.Mutex
	execs map[execKey]destExec
}

// execKey names an executor: a destination's server and the user its
// syncs impersonate ("": graphcd itself).
type execKey struct{ server, user string }

// destExec is the executor of one Destination.
type destExec struct {
	dest *Destination
	exec *appsync.Executor
}

func newEngines(s *settings.Settings, sc SyncConfig) (*engines, error) {
	h, err := health.New(health.Options{LuaChecks: engineopts.HealthChecks(s)})
	if err != nil {
		return nil, fmt.Errorf("health checks from settings: %w", err)
	}
	return &engines{settings: s, health: h, pace: sc, execs: map[execKey]destExec{}}, nil
}

// executor returns the sync executor of d that acts as user ("":
// graphcd's own credentials), the same one for every step of its syncs
// while d and the settings stay.
func (e *engines) executor(d *Destination, user string) (*appsync.Executor, error) {
	if d.Client == nil || d.Mapper == nil {
		return nil, errors.New("syncs are not available: the controller has no client for the destination cluster")
	}
	key := execKey{server: d.Server, user: user}
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.execs[key]; ok && x.dest == d {
		return x.exec, nil
	}
	client, err := d.ClientAs(user)
	if err != nil {
		return nil, err
	}
	cfg := appsync.Config{
		Client: client, Mapper: d.Mapper, Health: e.health, WaveDelay: e.pace.WaveDelay, PollInterval: e.pace.PollInterval,
	}
	if d.Live != nil {
		cfg.Reader = liveReader{d.Live}
	}
	exec, err := appsync.New(cfg)
	if err != nil {
		return nil, err
	}
	// A cluster whose Secret changed has a new Destination: the executors
	// of the old one (its cache, its clients) go with it.
	for k, x := range e.execs {
		if k.server == d.Server && x.dest != d {
			delete(e.execs, k)
		}
	}
	if len(e.execs) >= maxImpersonated {
		clear(e.execs)
	}
	e.execs[key] = destExec{dest: d, exec: exec}
	return exec, nil
}

// Settings returns the settings the reconciler compares with now.
func (r *Reconciler) Settings() *settings.Settings { return r.engines.Load().settings }

// UpdateSettings switches the reconciler to s (health checks and ignore
// rules) for every comparison that starts afterwards. An error (a Lua
// check that does not compile) keeps the previous settings. It does not
// refresh apps; the settings watch does that.
//
// The instance label key, tracking method and resource filters stay as
// they were at start: the cluster cache is built with them.
func (r *Reconciler) UpdateSettings(s *settings.Settings) error {
	e, err := newEngines(s, r.opts.Sync)
	if err != nil {
		return err
	}
	r.engines.Store(e)
	return nil
}

// settingsWatch reloads graphcd-cm when it changes and refreshes every app.
// It follows the ConfigMap through the process's kubewatch.Source, shared
// with the other readers of graphcd-cm, and reconciles its latest version.
type settingsWatch struct {
	client    client.Client
	r         *Reconciler
	namespace string
	// base are the settings the controller started with; they return when
	// graphcd-cm is deleted.
	base *settings.Settings
	log  *slog.Logger

	watch      *kubewatch.Source
	restConfig *rest.Config
	// latest is graphcd-cm as last seen; nil when it is missing.
	latest  atomic.Pointer[corev1.ConfigMap]
	changed chan event.GenericEvent
}

func (w *settingsWatch) setup(mgr ctrl.Manager) error {
	w.changed = make(chan event.GenericEvent, 1)
	if err := mgr.Add(manager.RunnableFunc(w.follow)); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("settings").
		WatchesRawSource(source.Channel(w.changed, &handler.EnqueueRequestForObject{})).
		Complete(w)
}

// follow records every version of graphcd-cm and asks for a reconcile,
// until ctx ends.
func (w *settingsWatch) follow(ctx context.Context) error {
	watch := w.watch
	if watch == nil {
		kc, err := kubernetes.NewForConfig(w.restConfig)
		if err != nil {
			return err
		}
		watch = kubewatch.NewSource(ctx, kc, w.namespace)
	}
	key := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.namespace, Name: SettingsConfigMap}}
	err := watch.ConfigMap(ctx, SettingsConfigMap, func(cm *corev1.ConfigMap) {
		w.latest.Store(cm)
		select {
		case w.changed <- event.GenericEvent{Object: key}:
		default: // one is queued already; it reads the latest version
		}
	})
	if err != nil {
		return fmt.Errorf("watch %s: %w", SettingsConfigMap, err)
	}
	<-ctx.Done()
	return nil
}

// Reconcile implements reconcile.Reconciler for graphcd-cm.
func (w *settingsWatch) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := w.base
	if cm := w.latest.Load(); cm != nil {
		parsed, err := settings.Parse(cm.Data)
		if err != nil {
			// A broken edit must not take away working settings.
			w.log.ErrorContext(ctx, "settings: keeping the previous settings", "configmap", req.String(), "err", err)
			return ctrl.Result{}, nil
		}
		s = parsed
	}
	if reflect.DeepEqual(s, w.r.Settings()) {
		return ctrl.Result{}, nil
	}
	if s.InstanceLabelKey != w.base.InstanceLabelKey || s.TrackingMethod != w.base.TrackingMethod ||
		!reflect.DeepEqual(s.Exclusions, w.base.Exclusions) || !reflect.DeepEqual(s.Inclusions, w.base.Inclusions) {
		w.log.WarnContext(ctx, "settings: tracking and resource filters take effect on restart", "configmap", req.String())
	}
	if err := w.r.UpdateSettings(s); err != nil {
		w.log.ErrorContext(ctx, "settings: keeping the previous settings", "configmap", req.String(), "err", err)
		return ctrl.Result{}, nil
	}
	w.log.InfoContext(ctx, "settings: reloaded; refreshing every app", "configmap", req.String())
	apps, err := w.r.listApps(ctx)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("list applications after a settings change: %w", err)
	}
	for _, app := range apps {
		if err := w.r.refreshWait(ctx, types.NamespacedName{Namespace: app.Namespace, Name: app.Name}); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
