// Package redismetrics counts and times the requests graphcd's Redis
// clients make, as Argo CD's argocd_redis_request_total and
// argocd_redis_request_duration do: Instrument a client once, where it is
// created, and register Collectors where the process serves /metrics.
package redismetrics

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Initiators, the roles that make requests; Argo CD's label names the
// component the same way (argocd-server, argocd-repo-server ...).
const (
	Server     = "graphcd-server"
	Controller = "graphcd-controller"
	RepoServer = "graphcd-repo-server"
)

var (
	requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_redis_request_total",
		Help: "Requests to Redis (one per command, pipeline or transaction), by initiating role and whether they failed; a missing key is not a failure.",
	}, []string{"initiator", "failed"})
	// Argo CD's buckets, and its name without a unit suffix.
	seconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_redis_request_duration",
		Help:    "How long requests to Redis took, in seconds, by initiating role.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2},
	}, []string{"initiator"})
)

// Collectors returns the Redis families.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{requests, seconds}
}

// Instrument counts and times client's requests under initiator. Its
// series exist from then on, so that a rate of failures reads 0, not
// nothing, before the first.
func Instrument(client *redis.Client, initiator string) {
	client.AddHook(hook{
		ok:      requests.WithLabelValues(initiator, "false"),
		failed:  requests.WithLabelValues(initiator, "true"),
		seconds: seconds.WithLabelValues(initiator),
	})
}

// hook is a go-redis hook observing every round trip.
type hook struct {
	ok, failed prometheus.Counter
	seconds    prometheus.Observer
}

func (h hook) observe(start time.Time, err error) {
	h.seconds.Observe(time.Since(start).Seconds())
	if err != nil && !errors.Is(err, redis.Nil) {
		h.failed.Inc()
		return
	}
	h.ok.Inc()
}

// DialHook implements redis.Hook; dials are not requests.
func (hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if handshake(cmd) {
			return next(ctx, cmd)
		}
		start := time.Now()
		err := next(ctx, cmd)
		h.observe(start, err)
		return err
	}
}

// ProcessPipelineHook implements redis.Hook: a pipeline is one request,
// failed when any of its commands failed.
func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && handshake(cmds[0]) {
			return next(ctx, cmds)
		}
		start := time.Now()
		err := next(ctx, cmds)
		failed := err
		for _, c := range cmds {
			if failed == nil || errors.Is(failed, redis.Nil) {
				failed = c.Err()
			}
		}
		h.observe(start, failed)
		return err
	}
}

// handshake reports whether cmd is one go-redis sends to set up a new
// connection (through the hooks too): not a request of graphcd's, and
// refused by older servers (CLIENT SETINFO), so not counted.
func handshake(cmd redis.Cmder) bool {
	switch strings.ToLower(cmd.Name()) {
	case "hello", "auth", "client", "select", "readonly":
		return true
	}
	return false
}
