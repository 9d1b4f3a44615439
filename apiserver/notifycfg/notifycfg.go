// Package notifycfg keeps the API server's notifications configuration
// current, as the controller's notifier does: graphcd-notifications-cm
// and graphcd-notifications-secret in graphcd's namespace, or Argo CD's
// argocd-notifications-cm and argocd-notifications-secret when graphcd's
// are missing. It serves testNotification (render, and send when asked,
// within bounds) and the subscriptions the API lists.
package notifycfg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"

	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// Bounds on the sends of tests: each as long as the controller's may
// take, a few at once for the whole server, and a few a second per
// service (a test button pressed in a loop must not flood a channel).
const (
	SendTimeout = 20 * time.Second
	maxSends    = 4
	sendRate    = 1
	sendBurst   = 5
)

// ErrSendTimeout is a send that did not end within SendTimeout.
var ErrSendTimeout = notifications.ErrSendTimeout

// ErrRateLimited is a send refused by the rate limit of its service.
var ErrRateLimited = errors.New("too many test notifications to this service; try again in a few seconds")

// Source is the configuration now, and the bounded sender of tests. The
// zero value is not ready: make one with New. It is safe for concurrent
// use.
type Source struct {
	// Logger, when set, hears why a configuration is refused, once per
	// version.
	Logger *slog.Logger

	cur   atomic.Pointer[version]
	sends chan struct{}

	mu     sync.Mutex
	limits map[string]*rate.Limiter
}

// version is one version of the configuration: the last good one, and
// why the latest does not parse.
type version struct {
	cfg *notifications.Config
	// name is the ConfigMap's name; empty when there is none.
	name string
	err  error
}

// New returns a Source with the built-in catalog alone until Update or
// Start gives it a configuration.
func New(logger *slog.Logger) *Source {
	return &Source{Logger: logger, sends: make(chan struct{}, maxSends), limits: map[string]*rate.Limiter{}}
}

// catalogOnly is the configuration without a ConfigMap: the built-in
// triggers and templates, no services.
var catalogOnly = sync.OnceValue(func() *notifications.Config {
	cfg, err := notifications.Parse(nil, nil)
	if err != nil {
		panic(err)
	}
	return cfg
})

// Start follows the ConfigMaps and Secrets through watch (graphcd's
// namespace) until ctx ends. It returns once the current configuration
// is loaded.
func (s *Source) Start(ctx context.Context, watch *kubewatch.Source) error {
	return notifications.Follow(ctx, watch, s.Update)
}

// Update loads a version of the configuration: cm (nil: none, the
// built-in catalog alone) with secret's values. A ConfigMap that does
// not parse keeps the last good configuration, as the controller does,
// and Config reports why.
func (s *Source) Update(cm *corev1.ConfigMap, secret *corev1.Secret) {
	if cm == nil {
		s.cur.Store(&version{cfg: catalogOnly()})
		return
	}
	var data map[string][]byte
	if secret != nil {
		data = secret.Data
	}
	cfg, err := notifications.Parse(cm.Data, data)
	if err != nil {
		prev := s.cur.Load()
		v := &version{cfg: catalogOnly(), name: cm.Name, err: fmt.Errorf("%s does not parse: %s", cm.Name, notifications.Mask(data, err.Error()))}
		if prev != nil && prev.err == nil && prev.name != "" {
			v.cfg = prev.cfg
		}
		s.cur.Store(v)
		if s.Logger != nil {
			s.Logger.Warn("notifications: the configuration does not parse; the API keeps the previous one", "configmap", cm.Name, "err", v.err)
		}
		return
	}
	s.cur.Store(&version{cfg: cfg, name: cm.Name})
}

// Config is the configuration now (the built-in catalog alone while
// there is no ConfigMap), and, when the ConfigMap does not parse, why:
// the configuration is then the last that did, as the controller keeps
// delivering with it. The error holds no value of the Secret.
func (s *Source) Config() (*notifications.Config, error) {
	v := s.cur.Load()
	if v == nil {
		return catalogOnly(), nil
	}
	return v.cfg, v.err
}

// Send sends n to dest through cfg's service within SendTimeout, at most
// a few at once for the whole server and a few a second per service. The
// error is masked with cfg.Redact.
func (s *Source) Send(ctx context.Context, cfg *notifications.Config, n services.Notification, dest services.Destination) error {
	svc, err := cfg.Sender(dest.Service)
	if err != nil {
		return errors.New(cfg.Redact(err.Error()))
	}
	if !s.limiter(dest.Service).Allow() {
		return ErrRateLimited
	}
	err = notifications.SendWithin(ctx, s.sends, SendTimeout, svc, n, dest)
	if err == nil || errors.Is(err, ErrSendTimeout) {
		return err
	}
	return errors.New(cfg.Redact(err.Error()))
}

// limiter is service's rate limit.
func (s *Source) limiter(service string) *rate.Limiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	lim, ok := s.limits[service]
	if !ok {
		lim = rate.NewLimiter(sendRate, sendBurst)
		s.limits[service] = lim
	}
	return lim
}
