package resolvers

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/internal/gqlmodel"
)

// EventSource streams reconciliation events (an eventbus.Bus).
type EventSource interface {
	Subscribe(ctx context.Context, f eventbus.Filter, opts eventbus.Options) *eventbus.Subscription
}

// DefaultMaxSubscriptions is how many subscriptions one websocket may
// carry at once.
const DefaultMaxSubscriptions = 100

type socketKey struct{}

// socket counts the subscriptions of one websocket.
type socket struct {
	max    int32
	active atomic.Int32
}

// WithSocket returns the context of a new websocket connection, on which at
// most max subscriptions may run at once (DefaultMaxSubscriptions when max
// is 0). The server calls it when a client sends connection_init.
func WithSocket(ctx context.Context, max int) context.Context {
	if max <= 0 {
		max = DefaultMaxSubscriptions
	}
	return context.WithValue(ctx, socketKey{}, &socket{max: int32(max)})
}

// acquireSubscription counts a new subscription against its socket's
// limit; call release when it ends.
func acquireSubscription(ctx context.Context) (release func(), err error) {
	s, ok := ctx.Value(socketKey{}).(*socket)
	if !ok {
		return func() {}, nil
	}
	if s.active.Add(1) > s.max {
		s.active.Add(-1)
		return nil, Errorf(CodeBadUserInput, "too many subscriptions on one connection (at most %d); open another connection", s.max)
	}
	return func() { s.active.Add(-1) }, nil
}

// eventFilter turns the API's filter into the bus's.
func (r *Resolver) eventFilter(f *model.ApplicationEventFilter) eventbus.Filter {
	var out eventbus.Filter
	if f == nil {
		return out
	}
	out.Types = f.Types
	if len(f.Names) == 0 {
		out.Namespaces = f.Namespaces
		return out
	}
	namespaces := f.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{r.Namespace}
	}
	for _, ns := range namespaces {
		for _, name := range f.Names {
			out.Apps = append(out.Apps, types.NamespacedName{Namespace: ns, Name: name})
		}
	}
	return out
}

// streamEvents returns the bus's channel of the deliveries f selects; it
// closes when ctx ends, and release runs then. gqlgen reads the channel
// directly: the deliveries are shared with other subscribers and bound to
// the GraphQL ApplicationEvent as they are, so no goroutine or copy stands
// between the bus and the socket.
func (r *Resolver) streamEvents(ctx context.Context, f *model.ApplicationEventFilter, release func()) <-chan *eventbus.Delivery {
	filter := r.eventFilter(f)
	if r.Authz != nil {
		// Events of apps the caller may not see (or no longer may, or
		// that are gone) are not delivered.
		filter.Allow = func(key types.NamespacedName) bool { return r.visibleApp(ctx, key) != nil }
	}
	sub := r.Events.Subscribe(ctx, filter, eventbus.Options{})
	context.AfterFunc(ctx, release)
	if t, ok := ctx.Value(tapKey{}).(*EventTap); ok {
		t.deliveries = sub.Deliveries() // and gqlgen's reading is never driven
	}
	return sub.Deliveries()
}

type tapKey struct{}

// EventTap takes the deliveries of an applicationEvents subscription for
// a caller that executes each delivery's selection itself, once for every
// subscriber with the same selection (the server's shared execution of
// subscriptions), instead of gqlgen executing it again for each.
type EventTap struct {
	deliveries <-chan *eventbus.Delivery
}

// WithEventTap returns ctx for dispatching an applicationEvents
// subscription whose deliveries t takes: the subscription starts as
// usual (authorization, the socket's count, the bus subscription with
// the caller's filter), but its channel goes to t.
func WithEventTap(ctx context.Context, t *EventTap) context.Context {
	return context.WithValue(ctx, tapKey{}, t)
}

// Deliveries returns the subscription's channel, and false when the
// dispatch did not start one (it failed; its response says why).
func (t *EventTap) Deliveries() (<-chan *eventbus.Delivery, bool) {
	return t.deliveries, t.deliveries != nil
}

type replayKey struct{}

// WithReplay returns ctx for dispatching an applicationEvents
// subscription that yields d alone and ends: how a delivery that
// subscribers took through an EventTap is executed. Nothing is
// subscribed and nothing counts against the socket.
func WithReplay(ctx context.Context, d *eventbus.Delivery) context.Context {
	return context.WithValue(ctx, replayKey{}, d)
}

func replayedDelivery(ctx context.Context) *eventbus.Delivery {
	d, _ := ctx.Value(replayKey{}).(*eventbus.Delivery)
	return d
}

func replay(d *eventbus.Delivery) <-chan *eventbus.Delivery {
	ch := make(chan *eventbus.Delivery, 1)
	ch <- d
	close(ch)
	return ch
}

// streamApplication sends the app at key now and after each change until
// ctx ends or the caller may no longer see it.
func (r *Resolver) streamApplication(ctx context.Context, key types.NamespacedName, release func()) <-chan *gqlmodel.Application {
	changes := r.apps().Changes(ctx, key)
	out := make(chan *gqlmodel.Application)
	go func() {
		defer close(out)
		defer release()
		send := true
		for {
			policy := r.policyChanged()
			if r.lostApp(ctx, key) {
				return
			}
			if send {
				app := r.application(ctx, key)
				if app != nil {
					// The event's fields share their reads.
					app.Loaders = &loaders{r: r}
				}
				select {
				case out <- app:
				case <-ctx.Done():
					return
				}
			}
			select {
			case <-changes:
				send = true
			case <-policy:
				send = false // only a check: the app did not change
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
