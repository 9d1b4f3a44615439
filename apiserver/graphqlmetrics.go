package apiserver

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
)

// The operation label is the name a client gives its operation, which
// may be anything: it is bounded to maxOperationNames names per process,
// the first that callers who are logged in send, of at most
// maxOperationNameLength characters. Any other name counts as
// otherOperation, an operation without a name as unnamedOperation.
const (
	maxOperationNames      = 200
	maxOperationNameLength = 64
	otherOperation         = "(other)"
	unnamedOperation       = "(unnamed)"
)

var graphQLName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// operationMetrics count and time GraphQL operations by name and type,
// and count the subscriptions open.
type operationMetrics struct {
	requests    *prometheus.CounterVec
	seconds     *prometheus.HistogramVec
	subscribers prometheus.Gauge

	mu    sync.Mutex
	names map[string]bool
}

func newOperationMetrics(reg prometheus.Registerer) (*operationMetrics, error) {
	m := &operationMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "graphcd_graphql_requests_total",
			Help: "GraphQL operations executed, by operation name, type (query, mutation, subscription) and whether the response had errors (a subscription counts once, when it starts, without).",
		}, []string{"operation", "type", "failed"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "graphcd_graphql_request_duration_seconds",
			Help:    "How long GraphQL queries and mutations took, from reading the request to the response, by operation name and type.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation", "type"}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "graphcd_websocket_subscribers",
			Help: "GraphQL subscriptions open on websockets to this server.",
		}),
		names: map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.requests, m.seconds, m.subscribers} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register GraphQL metrics: %w", err)
		}
	}
	return m, nil
}

// operation is the operation label of name; see maxOperationNames.
func (m *operationMetrics) operation(name string, authenticated bool) string {
	switch {
	case name == "":
		return unnamedOperation
	case len(name) > maxOperationNameLength || !graphQLName.MatchString(name):
		return otherOperation
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names[name] {
		return name
	}
	if !authenticated || len(m.names) >= maxOperationNames {
		return otherOperation
	}
	m.names[name] = true
	return name
}

// around is an operation interceptor. A subscription is counted and
// followed by its context alone: wrapping its responses would grow every
// subscriber's goroutine (see newGraphQL).
func (m *operationMetrics) around(authenticated func(context.Context) bool) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		typ, name := "query", oc.OperationName
		if oc.Operation != nil {
			typ = string(oc.Operation.Operation)
			name = oc.Operation.Name
		}
		op := m.operation(name, authenticated(ctx))
		if typ == string(ast.Subscription) {
			m.requests.WithLabelValues(op, typ, "false").Inc()
			m.subscribers.Inc()
			context.AfterFunc(ctx, m.subscribers.Dec)
			return next(ctx)
		}
		start := oc.Stats.OperationStart
		if start.IsZero() {
			start = time.Now()
		}
		respond := next(ctx)
		var once sync.Once
		return func(ctx context.Context) *graphql.Response {
			resp := respond(ctx)
			once.Do(func() {
				m.seconds.WithLabelValues(op, typ).Observe(time.Since(start).Seconds())
				m.requests.WithLabelValues(op, typ, strconv.FormatBool(resp != nil && len(resp.Errors) > 0)).Inc()
			})
			return resp
		}
	}
}
