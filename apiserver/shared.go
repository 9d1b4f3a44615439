package apiserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/resolvers"
)

// sharedRecent is how many of a group's latest deliveries keep their
// response until every member has taken it. Members take a delivery
// within moments of each other; one that falls further behind executes
// its selection itself.
const sharedRecent = 16

// sharingWebsocket is gqlgen's websocket transport with an executor that
// runs the selection of an applicationEvents subscription once per
// delivery for every subscriber who asked the same thing, instead of once
// per subscriber and delivery. Each subscriber keeps its own subscription
// to the bus (its filter, its authorization, its buffer and Lagged
// markers); only the execution of what it selects is shared.
type sharingWebsocket struct {
	transport.Websocket
	shared *sharedSubscriptions
}

// Do serves a websocket as gqlgen's transport does.
func (t sharingWebsocket) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Websocket.Do(w, r, sharingExecutor{GraphExecutor: exec, shared: t.shared})
}

// sharedSubscriptions are the groups of subscribers whose responses are
// the same for the same delivery: one document, operation and variables,
// asked by one principal (what a field may show can depend on who asks).
type sharedSubscriptions struct {
	mu     sync.Mutex
	groups map[shareKeyHash]*shareGroup

	// responses counts the responses subscribers got, executions the
	// selections executed to make them.
	responses, executions prometheus.Counter
}

func newSharedSubscriptions(reg prometheus.Registerer) (*sharedSubscriptions, error) {
	s := &sharedSubscriptions{
		groups: map[shareKeyHash]*shareGroup{},
		responses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "graphcd_subscription_event_responses_total",
			Help: "Responses sent to applicationEvents subscribers.",
		}),
		executions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "graphcd_subscription_event_executions_total",
			Help: "Selections executed to make them; subscribers who asked the same share one execution per event.",
		}),
	}
	for _, c := range []prometheus.Collector{s.responses, s.executions} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register subscription metrics: %w", err)
		}
	}
	return s, nil
}

func (s *sharedSubscriptions) join(key shareKeyHash) *shareGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.groups[key]
	if g == nil {
		g = &shareGroup{key: key}
		s.groups[key] = g
	}
	g.members.Add(1)
	return g
}

func (s *sharedSubscriptions) leave(g *shareGroup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.members.Add(-1) == 0 {
		delete(s.groups, g.key)
	}
}

// shareGroup holds the responses to a group's latest deliveries. The bus
// hands every subscriber of an event the same *Delivery, so a delivery is
// its own key.
type shareGroup struct {
	key     shareKeyHash
	members atomic.Int32 // changed under sharedSubscriptions.mu

	mu     sync.Mutex
	recent map[*eventbus.Delivery]*sharedResponse // made when first shared
	order  [sharedRecent]*eventbus.Delivery
	next   int
}

// sharedResponse is the response to one delivery, ready once done is
// closed; nil when its execution gave none (its subscriber left).
type sharedResponse struct {
	done chan struct{}
	resp *graphql.Response
	// left is how many members have yet to take it.
	left int32
}

// response returns the group's response to d, made by exec unless
// another member has made it or is making it.
func (g *shareGroup) response(d *eventbus.Delivery, exec func() *graphql.Response) *graphql.Response {
	members := g.members.Load()
	for {
		g.mu.Lock()
		r, made := g.recent[d]
		if !made {
			r = &sharedResponse{done: make(chan struct{}), left: members}
			g.remember(d, r)
		}
		if r.left--; r.left <= 0 && g.recent[d] == r {
			delete(g.recent, d) // every member has it
		}
		g.mu.Unlock()
		if !made {
			return g.make(d, r, exec)
		}
		<-r.done
		if r.resp != nil {
			return r.resp
		}
		// Its maker's subscription ended first: make it here.
	}
}

// remember keeps r as the response to d, forgetting the oldest of the
// recent deliveries.
func (g *shareGroup) remember(d *eventbus.Delivery, r *sharedResponse) {
	if g.recent == nil {
		g.recent = make(map[*eventbus.Delivery]*sharedResponse, sharedRecent)
	}
	if old := g.order[g.next]; old != nil {
		delete(g.recent, old)
	}
	g.order[g.next], g.recent[d] = d, r
	g.next = (g.next + 1) % sharedRecent
}

func (g *shareGroup) make(d *eventbus.Delivery, r *sharedResponse, exec func() *graphql.Response) *graphql.Response {
	defer close(r.done)
	defer func() {
		if r.resp == nil {
			g.mu.Lock()
			if g.recent[d] == r {
				delete(g.recent, d)
			}
			g.mu.Unlock()
		}
	}()
	if resp := exec(); resp != nil {
		// gqlgen writes the data of its next response over this one's.
		shared := *resp
		shared.Data = bytes.Clone(resp.Data)
		r.resp = &shared
	}
	return r.resp
}

// sharingExecutor is the executor a socket's transport gets: gqlgen's,
// but for applicationEvents subscriptions (see sharingWebsocket).
type sharingExecutor struct {
	graphql.GraphExecutor
	shared *sharedSubscriptions
}

// DispatchOperation starts the subscription through gqlgen as usual, with
// its deliveries tapped; its responses are then the group's.
func (e sharingExecutor) DispatchOperation(ctx context.Context, opCtx *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if !isApplicationEvents(opCtx) {
		return e.GraphExecutor.DispatchOperation(ctx, opCtx)
	}
	// Joined before the bus subscription starts, so that a group counts
	// every member that can receive a delivery.
	g := e.shared.join(shareKey(ctx, opCtx))
	tap := &resolvers.EventTap{}
	next, ctx := e.GraphExecutor.DispatchOperation(resolvers.WithEventTap(ctx, tap), opCtx)
	deliveries, ok := tap.Deliveries()
	if !ok {
		e.shared.leave(g)
		return next, ctx // refused; next answers why
	}
	context.AfterFunc(ctx, func() { e.shared.leave(g) })
	return func(ctx context.Context) *graphql.Response {
		var d *eventbus.Delivery
		select {
		case d, ok = <-deliveries:
			if !ok {
				return nil
			}
		case <-ctx.Done():
			return nil
		}
		execute := func() *graphql.Response {
			if !tap.Feed(ctx, d) {
				return nil
			}
			e.shared.executions.Inc()
			return next(ctx)
		}
		var resp *graphql.Response
		if g.members.Load() == 1 {
			resp = execute() // nobody to share with
		} else {
			resp = g.response(d, execute)
		}
		if resp != nil {
			e.shared.responses.Inc()
		}
		return resp
	}, ctx
}

// isApplicationEvents reports whether opCtx subscribes to applicationEvents.
func isApplicationEvents(opCtx *graphql.OperationContext) bool {
	if opCtx.Operation == nil || opCtx.Operation.Operation != ast.Subscription {
		return false
	}
	fields := graphql.CollectFields(opCtx, opCtx.Operation.SelectionSet, []string{"Subscription"})
	return len(fields) == 1 && fields[0].Name == "applicationEvents"
}

// shareKey says which subscribers get the same response to a delivery:
// those of one principal (the anonymous one included) asking the same
// operation with the same variables (encoding/json writes map keys
// sorted). A response's errors carry the request id of the subscriber
// whose execution made them, which is the one their log lines have.
func shareKey(ctx context.Context, opCtx *graphql.OperationContext) shareKeyHash {
	p, _ := auth.FromContext(ctx)
	groups := slices.Sorted(slices.Values(p.Groups))
	vars, _ := json.Marshal(opCtx.Variables) // variables came from JSON
	var b []byte
	for _, part := range append([]string{p.Subject, p.Email, opCtx.OperationName, opCtx.RawQuery, string(vars)}, groups...) {
		b = binary.AppendUvarint(b, uint64(len(part)))
		b = append(b, part...)
	}
	return sha256.Sum256(b)
}

// shareKeyHash is a share key's SHA-256: subscribers share only when
// their keys are equal.
type shareKeyHash [sha256.Size]byte
