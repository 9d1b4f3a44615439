package controller

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// EventBudget bounds the Kubernetes Events a controller records, as the
// kubelet's --event-qps and --event-burst do: an app sends about six as
// it is first synced (two transitions each of sync and health status, an
// operation's start and end), so a thousand new apps a minute are 100
// writes a second to the management cluster's API server on top of the
// status writes they wait for. Events past the budget are dropped and
// counted (graphcd_controller_events_dropped_total); the reconciliation
// events of the API's subscriptions are not affected.
type EventBudget struct {
	// QPS is the sustained rate; 0 or less records every Event.
	QPS float64
	// Burst is how many may be recorded at once (at least 1).
	Burst int
}

// DefaultEventBudget is the controller's budget unless --event-qps and
// --event-burst say otherwise.
var DefaultEventBudget = EventBudget{QPS: 25, Burst: 250}

var eventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "graphcd_controller_events_dropped_total",
	Help: "Kubernetes Events the controller did not record, being over its --event-qps budget.",
})

func init() { crmetrics.Registry.MustRegister(eventsDropped) }

// budgetedEvents is a process's Event budget, shared by its recorders.
type budgetedEvents struct {
	limit *rate.Limiter // nil: no budget
	log   *slog.Logger
	// dropped counts the Events dropped since the last warning, which
	// is logged at most once a minute.
	dropped  atomic.Int64
	lastWarn atomic.Int64 // unix seconds
}

func newBudgetedEvents(b EventBudget, log *slog.Logger) *budgetedEvents {
	e := &budgetedEvents{log: log}
	if b.QPS > 0 {
		e.limit = rate.NewLimiter(rate.Limit(b.QPS), max(b.Burst, 1))
	}
	return e
}

// recorder wraps rec in the budget.
func (e *budgetedEvents) recorder(rec events.EventRecorder) events.EventRecorder {
	if e.limit == nil {
		return rec
	}
	return &budgetedRecorder{rec: rec, budget: e}
}

// allow takes one Event from the budget, or counts it dropped.
func (e *budgetedEvents) allow() bool {
	if e.limit.Allow() {
		return true
	}
	eventsDropped.Inc()
	n := e.dropped.Add(1)
	now := time.Now().Unix()
	if last := e.lastWarn.Load(); now-last >= 60 && e.lastWarn.CompareAndSwap(last, now) {
		e.dropped.Add(-n)
		e.log.Warn("Kubernetes Events over the budget dropped", "dropped", n, "qps", float64(e.limit.Limit()), "burst", e.limit.Burst())
	}
	return false
}

type budgetedRecorder struct {
	rec    events.EventRecorder
	budget *budgetedEvents
}

func (r *budgetedRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	if r.budget.allow() {
		r.rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
	}
}
