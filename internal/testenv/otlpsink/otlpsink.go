// Package otlpsink runs the OpenTelemetry Collector's OTLP receiver (its
// gRPC endpoint, from the Collector's own Go modules) on 127.0.0.1 and
// keeps the spans it receives in memory, for tests and the load test that
// check what graphcd sends over the real wire protocol.
package otlpsink

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
)

// Span is one span received, in the form tests compare.
type Span struct {
	TraceID, SpanID, ParentID string
	Name, Service             string
	Start, End                time.Time
	Attributes                map[string]string
	// Error is true when the span's status is Error.
	Error bool
}

// Sink is a running OTLP/gRPC receiver.
type Sink struct {
	// Addr is the host:port to send OTLP/gRPC to, without TLS.
	Addr string

	rcv   receiver.Traces
	keep  bool // false when only counting
	mu    sync.Mutex
	spans []Span
	count int
}

// Options configure a Sink.
type Options struct {
	// CountOnly counts the spans without keeping them.
	CountOnly bool
}

// Start starts a receiver on a free loopback port.
func Start(ctx context.Context, o Options) (*Sink, error) {
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := lis.Addr().String()
	_ = lis.Close() // the receiver listens itself

	s := &Sink{Addr: addr, keep: !o.CountOnly}
	factory := otlpreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = addr
	cfg.Protocols.HTTP = configoptional.None[otlpreceiver.HTTPConfig]()
	next, err := consumer.NewTraces(s.consume)
	if err != nil {
		return nil, err
	}
	set := receiver.Settings{
		ID: component.MustNewID("otlp"),
		TelemetrySettings: component.TelemetrySettings{
			Logger: zap.NewNop(), TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
			Resource: pcommon.NewResource(),
		},
		BuildInfo: component.NewDefaultBuildInfo(),
	}
	s.rcv, err = factory.CreateTraces(ctx, set, cfg, next)
	if err != nil {
		return nil, fmt.Errorf("OTLP receiver: %w", err)
	}
	if err := s.rcv.Start(ctx, host{}); err != nil {
		return nil, fmt.Errorf("OTLP receiver on %s: %w", addr, err)
	}
	return s, nil
}

// Close stops the receiver.
func (s *Sink) Close(ctx context.Context) error { return s.rcv.Shutdown(ctx) }

// Count returns how many spans arrived.
func (s *Sink) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// Spans returns the spans kept so far, in arrival order.
func (s *Sink) Spans() []Span {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Span(nil), s.spans...)
}

func (s *Sink) consume(_ context.Context, td ptrace.Traces) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count += td.SpanCount()
	if !s.keep {
		return nil
	}
	for _, rs := range td.ResourceSpans().All() {
		service := ""
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok {
			service = v.AsString()
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				attrs := map[string]string{}
				for k, v := range sp.Attributes().All() {
					attrs[k] = v.AsString()
				}
				parent := ""
				if !sp.ParentSpanID().IsEmpty() {
					parent = sp.ParentSpanID().String()
				}
				s.spans = append(s.spans, Span{
					TraceID: sp.TraceID().String(), SpanID: sp.SpanID().String(), ParentID: parent,
					Name: sp.Name(), Service: service, Start: sp.StartTimestamp().AsTime(), End: sp.EndTimestamp().AsTime(),
					Attributes: attrs, Error: sp.Status().Code() == ptrace.StatusCodeError,
				})
			}
		}
	}
	return nil
}

// Tree renders the spans of one trace as an indented tree, children by
// start time, each line "name [service] (duration) key=value ...".
func Tree(spans []Span) string {
	children := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	for _, s := range spans {
		p := s.ParentID
		if !ids[p] {
			p = "" // a root here, or its parent did not arrive
		}
		children[p] = append(children[p], s)
	}
	for _, c := range children {
		sort.Slice(c, func(i, j int) bool { return c[i].Start.Before(c[j].Start) })
	}
	var b strings.Builder
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range children[parent] {
			keys := make([]string, 0, len(s.Attributes))
			for k := range s.Attributes {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var attrs []string
			for _, k := range keys {
				attrs = append(attrs, k+"="+s.Attributes[k])
			}
			fmt.Fprintf(&b, "%s%s [%s] (%s) %s\n", strings.Repeat("  ", depth), s.Name, s.Service,
				s.End.Sub(s.Start).Round(time.Microsecond), strings.Join(attrs, " "))
			walk(s.SpanID, depth+1)
		}
	}
	walk("", 0)
	return b.String()
}

// host is the receiver's host: no extensions.
type host struct{}

func (host) GetExtensions() map[component.ID]component.Component { return nil }
