package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/internal/redismetrics"
	"github.com/graphcd/graphcd/internal/statusboard"
)

// sharedOptions choose where controllers and the API share what they see:
// live events and the applications' resource trees. Without Redis they
// share it in this process only.
type sharedOptions struct {
	redisAddr       string
	redisPassword   string
	redisSecretFile string
}

func (o *sharedOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.redisAddr, "redis", "",
		"Redis address host:port (or redis:// URL) through which controllers and API replicas share live events and resource trees (default: within this process)")
	f.StringVar(&o.redisPassword, "redis-password", "", "password of --redis")
	f.StringVar(&o.redisSecretFile, "redis-secret-file", "",
		"file holding the key (32 bytes or more) that signs what is shared through --redis; the same on every controller and API replica")
}

// eventBufferSize is the controller-side buffer between reconcilers and
// the bus; the bus itself never blocks.
const eventBufferSize = 4096

// shared is what the flags connect to.
type shared struct {
	events eventbus.Bus
	states appstate.Store
	// status is where controllers and replicas publish their status and
	// the clusters'.
	status statusboard.Board
	// redis is the Redis client behind them; nil without --redis.
	redis *redis.Client
	// secret signs what is shared through redis.
	secret []byte
}

// connect returns the event bus and state store the flags ask for; the
// Redis bus runs until ctx ends. initiator names the role in the Redis
// metrics.
func (o *sharedOptions) connect(ctx context.Context, c *cobra.Command, log *slog.Logger, initiator string) (*shared, error) {
	if o.redisAddr == "" {
		return &shared{events: eventbus.NewMemory(), states: appstate.NewMemory(), status: statusboard.NewMemory()}, nil
	}
	ropts, err := redisOptions(o.redisAddr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "redis"), err)
	}
	if o.redisPassword != "" {
		ropts.Password = o.redisPassword
	}
	if o.redisSecretFile == "" {
		return nil, fmt.Errorf("%s is required with --redis: replicas must verify what others wrote", command.FlagOrigin(c, "redis-secret-file"))
	}
	secret, err := os.ReadFile(o.redisSecretFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "redis-secret-file"), err)
	}
	client := redis.NewClient(ropts)
	redismetrics.Instrument(client, initiator)
	states, err := appstate.NewRedis(client, "", appstate.RedisOptions{Secret: secret, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "redis-secret-file"), err)
	}
	status, err := statusboard.NewRedis(client, statusboard.RedisOptions{Secret: secret})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "redis-secret-file"), err)
	}
	bus := eventbus.NewRedis(client, "", eventbus.RedisOptions{Logger: log})
	go func() {
		if err := bus.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("live events over Redis stopped", "err", err)
		}
	}()
	log.Info("sharing live events and resource trees through Redis", "addr", ropts.Addr)
	return &shared{events: bus, states: states, status: status, redis: client, secret: secret}, nil
}

// forwardEvents publishes the controller's events on bus until ctx ends.
// Events lost on the way (the controller outran it) give the bus's
// subscribers a lagged marker.
func forwardEvents(ctx context.Context, ctl *controller.Controller, bus eventbus.Bus, log *slog.Logger) {
	for ev := range ctl.Subscribe(ctx, eventBufferSize) {
		if ev.Type == controller.EventsLost {
			bus.Lost()
			continue
		}
		if err := bus.Publish(ctx, busEvent(ev)); err != nil {
			log.Debug("publish live event", "app", ev.App.String(), "err", err)
		}
	}
}

// busEvent maps a controller event to the bus's vocabulary.
func busEvent(ev controller.Event) eventbus.Event {
	out := eventbus.Event{
		App: ev.App, Sync: string(ev.Sync), Health: string(ev.Health), Revision: ev.Revision,
		Phase: string(ev.Phase), Message: ev.Message, Time: ev.Time,
	}
	switch ev.Type {
	case controller.EventResourceChanged:
		out.Type = eventbus.ResourceChanged
	case controller.EventSyncStatusChanged:
		out.Type = eventbus.SyncStatusChanged
	case controller.EventHealthChanged:
		out.Type = eventbus.HealthChanged
	case controller.EventOperationStarted, controller.EventOperationCompleted:
		out.Type = eventbus.OperationPhaseChanged
	default: // EventRefreshed
		out.Type = eventbus.ReconcileCompleted
	}
	return out
}
