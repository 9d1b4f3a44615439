package resolvers

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/auth/rbac"
	"github.com/graphcd/graphcd/graph/model"
	"github.com/graphcd/graphcd/internal/eventbus"
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

// admitAppSubscription admits a subscription to the app at key: the
// caller may get the app, and its connection has a subscription to
// spare. Call release when the subscription ends.
func (r *Resolver) admitAppSubscription(ctx context.Context, key types.NamespacedName) (release func(), err error) {
	if err := r.authorizeApp(ctx, rbac.ActionGet, key); err != nil {
		return nil, err
	}
	return acquireSubscription(ctx)
}

// eventFilter turns the API's filter into the bus's.
func (r *Resolver) eventFilter(f *model.ApplicationEventFilter) eventbus.Filter {
	var out eventbus.Filter
	if f == nil {
		return out
	}
	out.Types = eventTypes(f.Types)
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

// streamEvents returns a channel of the events f selects; it closes when
// ctx ends, and release runs then. Through a tap (the server's websockets)
// no goroutine stands between the bus and the socket: the tap's caller
// feeds each delivery it is to execute, mapped then. Without one, a
// goroutine maps each delivery.
func (r *Resolver) streamEvents(ctx context.Context, f *model.ApplicationEventFilter, release func()) <-chan *model.ApplicationEvent {
	filter := r.eventFilter(f)
	if r.Authz != nil {
		// Events of apps the caller may not see (or no longer may, or
		// that are gone) are not delivered.
		filter.Allow = func(key types.NamespacedName) bool { return r.visibleApp(ctx, key) != nil }
	}
	sub := r.Events.Subscribe(ctx, filter, eventbus.Options{})
	context.AfterFunc(ctx, release)
	if t, ok := ctx.Value(tapKey{}).(*EventTap); ok {
		t.deliveries, t.feed = sub.Deliveries(), make(chan *model.ApplicationEvent, 1)
		return t.feed
	}
	out := make(chan *model.ApplicationEvent)
	go func() {
		defer close(out)
		for d := range sub.Deliveries() {
			select {
			case out <- applicationEvent(d):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

type tapKey struct{}

// EventTap stands between an applicationEvents subscription's bus channel
// and gqlgen, for a caller that shares the execution of a delivery's
// selection among the subscribers who asked the same (the server's
// shared subscriptions): the caller takes each delivery, and feeds it to
// gqlgen only when this subscriber is the one to execute it.
type EventTap struct {
	deliveries <-chan *eventbus.Delivery
	feed       chan *model.ApplicationEvent
}

// WithEventTap returns ctx for dispatching an applicationEvents
// subscription through t: it starts as usual (authorization, the
// socket's count, the bus subscription with the caller's filter), but
// its deliveries go to t, and gqlgen's stream reads only what t feeds it.
func WithEventTap(ctx context.Context, t *EventTap) context.Context {
	return context.WithValue(ctx, tapKey{}, t)
}

// Deliveries returns the subscription's bus channel, and false when the
// dispatch did not start one (it failed; its response says why).
func (t *EventTap) Deliveries() (<-chan *eventbus.Delivery, bool) {
	return t.deliveries, t.deliveries != nil
}

// Feed hands d to gqlgen's stream, whose next response is then d's, and
// reports true; call it only before asking for that response, once per
// response. It reports false once ctx has ended: a response asked for
// after the end may not have taken what was fed before it.
func (t *EventTap) Feed(ctx context.Context, d *eventbus.Delivery) bool {
	select {
	case t.feed <- applicationEvent(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// streamApplication sends the app at key now and after each change until
// ctx ends or the caller may no longer see it.
func (r *Resolver) streamApplication(ctx context.Context, key types.NamespacedName, release func()) <-chan *model.Application {
	changes := r.apps().Changes(ctx, key)
	out := make(chan *model.Application)
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
