package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// EventType says what happened to an app.
type EventType string

// Event types, in the order a refresh produces them.
const (
	// EventResourceChanged: a live object of the app changed.
	EventResourceChanged EventType = "ResourceChanged"
	// EventRefreshed: the app was compared again (sent on every reconcile
	// that got as far as a comparison, successful or not).
	EventRefreshed EventType = "Refreshed"
	// EventSyncStatusChanged: status.sync.status changed.
	EventSyncStatusChanged EventType = "SyncStatusChanged"
	// EventHealthChanged: status.health.status changed.
	EventHealthChanged EventType = "HealthChanged"
	// EventOperationStarted: the controller started an operation (a sync).
	EventOperationStarted EventType = "OperationStarted"
	// EventOperationCompleted: an operation ended; Phase and Message say
	// how.
	EventOperationCompleted EventType = "OperationCompleted"
	// EventsLost is no app's event: the subscriber's buffer was full and
	// events meant for it were lost before this one. It names no app.
	EventsLost EventType = "EventsLost"
)

// Event is one reconciliation event of an app, as Subscribe delivers it.
// Sync, Health and Revision are the app's state after the event (empty for
// ResourceChanged, which comes before the comparison); for operation
// events they are the state the operation started or ended from.
type Event struct {
	App      types.NamespacedName
	Type     EventType
	Sync     v1alpha1.SyncStatusCode
	Health   v1alpha1.HealthStatusCode
	Revision string
	Time     time.Time
	// Phase and Message are the operation's, for operation events.
	Phase   v1alpha1.OperationPhase
	Message string
}

// broker fans events out to subscribers without ever blocking the
// publisher: a subscriber whose buffer is full misses the event, the miss
// is counted, and the subscriber gets an EventsLost event as soon as its
// buffer has room for it and the next event (never, for a buffer under 2).
type broker struct {
	mu      sync.RWMutex
	subs    map[chan Event]*atomic.Bool // whether the subscriber missed events it was not told of
	dropped atomic.Uint64
}

func newBroker() *broker { return &broker{subs: map[chan Event]*atomic.Bool{}} }

// subscribe returns a channel with the given buffer that receives events
// until ctx ends; then it is closed.
func (b *broker) subscribe(ctx context.Context, buffer int) <-chan Event {
	if buffer < 0 {
		buffer = 0
	}
	ch := make(chan Event, buffer)
	b.mu.Lock()
	b.subs[ch] = new(atomic.Bool)
	b.mu.Unlock()
	go func() {
		<-ctx.Done()
		b.mu.Lock()
		delete(b.subs, ch)
		close(ch)
		b.mu.Unlock()
	}()
	return ch
}

// publish sends ev to every subscriber that has room for it, after an
// EventsLost event to one that missed events.
func (b *broker) publish(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	for ch, missed := range b.subs {
		if missed.Load() && cap(ch)-len(ch) < 2 {
			b.dropped.Add(1) // no room for the news and the event yet
			continue
		}
		if missed.CompareAndSwap(true, false) {
			select {
			case ch <- Event{Type: EventsLost, Time: ev.Time}:
			default:
				missed.Store(true)
				b.dropped.Add(1)
				continue
			}
		}
		select {
		case ch <- ev:
		default:
			missed.Store(true)
			b.dropped.Add(1)
		}
	}
}

// announcedStatus is what an announcement said of an app's status.
type announcedStatus struct {
	sync   v1alpha1.SyncStatusCode
	health v1alpha1.HealthStatusCode
}

// announce publishes the events of one reconcile and records Kubernetes
// Events for sync and health transitions. A transition is measured from
// the app's last announcement, when there was one, rather than from the
// status before: a reconcile that only compared announces before its
// status is written (statusWrites), and when that write fails the next
// reconcile starts from the old status again and would announce the
// same transition twice.
func (r *Reconciler) announce(app *v1alpha1.Application, before, after *v1alpha1.ApplicationStatus) {
	name := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
	was := r.memory.announce(name,
		announcedStatus{sync: before.Sync.Status, health: before.Health.Status},
		announcedStatus{sync: after.Sync.Status, health: after.Health.Status})
	// Stamped when published, as the operation's events are: an app's
	// events then never go back in time, though a pass that starts a sync
	// announces its comparison after the operation's first event.
	ev := Event{App: name, Sync: after.Sync.Status, Health: after.Health.Status, Revision: after.Sync.Revision, Time: time.Now()}
	ev.Type = EventRefreshed
	r.broker.publish(ev)
	if was.sync != after.Sync.Status {
		ev.Type = EventSyncStatusChanged
		r.broker.publish(ev)
		r.record(app, "SyncStatusChanged", string(was.sync), string(after.Sync.Status))
	}
	if was.health != after.Health.Status {
		ev.Type = EventHealthChanged
		r.broker.publish(ev)
		r.record(app, "HealthStatusChanged", string(was.health), string(after.Health.Status))
	}
}

// record writes a Kubernetes Event "<from> -> <to>" on app. The
// events.k8s.io recorder folds events of the same regarding object, reason
// and action into one series regardless of their note, so the action names
// the transition: a repeated transition counts up its series, a different
// one is an Event of its own.
func (r *Reconciler) record(app *v1alpha1.Application, reason, from, to string) {
	if r.opts.Recorder == nil {
		return
	}
	if from == "" {
		from = "Unknown"
	}
	if to == "" {
		to = "Unknown"
	}
	r.opts.Recorder.Eventf(app, nil, corev1.EventTypeNormal, reason, from+"->"+to, "%s -> %s", from, to)
}
