package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/eventbus"
)

// eventsOptions choose how live events travel: in this process only, or
// through Redis pub/sub between API replicas and controllers.
type eventsOptions struct {
	redisAddr     string
	redisPassword string
}

func (o *eventsOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.redisAddr, "events-redis", "",
		"Redis address host:port (or redis:// URL) through which controllers and API replicas share live events (default: within this process)")
	f.StringVar(&o.redisPassword, "events-redis-password", "", "password of --events-redis")
}

// eventBufferSize is the controller-side buffer between reconcilers and
// the bus; the bus itself never blocks.
const eventBufferSize = 4096

// newBus returns the event bus the flags ask for, running until ctx ends.
func (o *eventsOptions) newBus(ctx context.Context, c *cobra.Command, log *slog.Logger) (eventbus.Bus, error) {
	if o.redisAddr == "" {
		return eventbus.NewMemory(), nil
	}
	ropts, err := redisOptions(o.redisAddr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagOrigin(c, "events-redis"), err)
	}
	if o.redisPassword != "" {
		ropts.Password = o.redisPassword
	}
	bus := eventbus.NewRedis(redis.NewClient(ropts), "", eventbus.RedisOptions{Logger: log})
	go func() {
		if err := bus.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("live events over Redis stopped", "err", err)
		}
	}()
	log.Info("sharing live events through Redis", "addr", ropts.Addr)
	return bus, nil
}

// forwardEvents publishes the controller's events on bus until ctx ends.
func forwardEvents(ctx context.Context, ctl *controller.Controller, bus eventbus.Bus, log *slog.Logger) {
	for ev := range ctl.Subscribe(ctx, eventBufferSize) {
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
