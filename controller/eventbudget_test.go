package controller

import (
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

type countingRecorder struct{ n int }

func (c *countingRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {
	c.n++
}

func TestEventBudget(t *testing.T) {
	app := &v1alpha1.Application{}
	rec := &countingRecorder{}
	// A rate so low the bucket does not refill during the test: the
	// burst is recorded, the rest dropped and counted.
	budget := newBudgetedEvents(EventBudget{QPS: 0.001, Burst: 3}, slog.New(slog.DiscardHandler))
	limited, other := budget.recorder(rec), budget.recorder(rec)
	dropped := testutil.ToFloat64(eventsDropped)
	for range 5 {
		limited.Eventf(app, nil, corev1.EventTypeNormal, "SyncStatusChanged", "a", "a")
		other.Eventf(app, nil, corev1.EventTypeNormal, "OperationStarted", "b", "b")
	}
	if rec.n != 3 {
		t.Errorf("recorded %d Events of 10 with a burst of 3 shared by two recorders, want 3", rec.n)
	}
	if d := testutil.ToFloat64(eventsDropped) - dropped; d != 7 {
		t.Errorf("counted %v dropped, want 7", d)
	}

	rec.n = 0
	all := newBudgetedEvents(EventBudget{}, nil).recorder(rec)
	for range 1000 {
		all.Eventf(app, nil, corev1.EventTypeNormal, "SyncStatusChanged", "a", "a")
	}
	if rec.n != 1000 {
		t.Errorf("without a budget recorded %d of 1000", rec.n)
	}
}
