package controller

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// A subscriber with a full buffer misses events (counted) without
// blocking the publisher; others still get them; channels close with
// their context.
func TestBroker(t *testing.T) {
	b := newBroker()
	slowCtx, stopSlow := context.WithCancel(t.Context())
	slow := b.subscribe(slowCtx, 1)
	fast := b.subscribe(t.Context(), 8)
	app := types.NamespacedName{Namespace: "graphcd", Name: "web"}
	for _, typ := range []EventType{EventResourceChanged, EventRefreshed, EventSyncStatusChanged} {
		b.publish(Event{App: app, Type: typ})
	}
	if diff := cmp.Diff(b.dropped.Load(), uint64(2)); diff != "" {
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
	if ev := <-slow; ev.Type != EventResourceChanged {
		t.Errorf("slow subscriber got %s first, want %s", ev.Type, EventResourceChanged)
	}
	stopSlow()
	for range slow {
		t.Error("event after the subscription ended")
	}
}
