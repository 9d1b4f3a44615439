package controller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A subscriber with a full buffer misses events (counted) without
// blocking the publisher; others still get them; channels close with
// their context.
func TestBroker(t *testing.T) {
	b := newBroker()
	slowCtx, stopSlow := context.WithCancel(t.Context())
	slow := b.subscribe(slowCtx, 2)
	fast := b.subscribe(t.Context(), 8)
	app := types.NamespacedName{Namespace: "graphcd", Name: "web"}
	for _, typ := range []EventType{EventResourceChanged, EventRefreshed, EventSyncStatusChanged} {
		b.publish(Event{App: app, Type: typ})
	}
	if diff := cmp.Diff(b.dropped.Load(), uint64(1)); diff != "" {
		t.Errorf("dropped (-got +want):\n%s", diff)
	}
	var got []EventType
	for range 3 {
		ev := <-fast
		if ev.Time.IsZero() {
			t.Errorf("event %s has no time", ev.Type)
		}
		got = append(got, ev.Type)
	}
	if diff := cmp.Diff(got, []EventType{EventResourceChanged, EventRefreshed, EventSyncStatusChanged}); diff != "" {
		t.Errorf("fast subscriber (-got +want):\n%s", diff)
	}
	for _, want := range []EventType{EventResourceChanged, EventRefreshed} {
		if ev := <-slow; ev.Type != want {
			t.Errorf("slow subscriber got %s, want %s", ev.Type, want)
		}
	}
	// Once it has room, the slow subscriber learns that it missed events,
	// before the next one.
	b.publish(Event{App: app, Type: EventHealthChanged})
	if ev := <-slow; ev.Type != EventsLost || ev.App != (types.NamespacedName{}) {
		t.Errorf("slow subscriber got %+v after missing an event, want an EventsLost event naming no app", ev)
	}
	if ev := <-slow; ev.Type != EventHealthChanged {
		t.Errorf("slow subscriber got %s, want %s", ev.Type, EventHealthChanged)
	}
	stopSlow()
	for range slow {
		t.Error("event after the subscription ended")
	}
}

// A transition is announced once: a reconcile that computes it again
// from the old status (its queued status write failed) publishes only
// Refreshed, and a later transition is measured from the announced one.
func TestAnnounceOnce(t *testing.T) {
	r := &Reconciler{broker: newBroker(), memory: newAppMemory()}
	events := r.broker.subscribe(t.Context(), 16)
	app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "web"}}
	status := func(sync v1alpha1.SyncStatusCode, health v1alpha1.HealthStatusCode) *v1alpha1.ApplicationStatus {
		return &v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: sync}, Health: v1alpha1.HealthStatus{Status: health}}
	}
	written := status(v1alpha1.SyncStatusCodeSynced, v1alpha1.HealthStatusHealthy)
	outOfSync := status(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusHealthy)
	degraded := status(v1alpha1.SyncStatusCodeOutOfSync, v1alpha1.HealthStatusDegraded)
	var got []EventType
	announce := func(before, after *v1alpha1.ApplicationStatus) {
		r.announce(app, before, after)
		for len(events) > 0 {
			got = append(got, (<-events).Type)
		}
	}
	announce(written, outOfSync) // the write of outOfSync fails...
	announce(written, outOfSync) // ...so the next reconcile starts from written again
	announce(written, degraded)
	want := []EventType{
		EventRefreshed, EventSyncStatusChanged,
		EventRefreshed,
		EventRefreshed, EventHealthChanged,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("events (-got +want):\n%s", diff)
	}
}
