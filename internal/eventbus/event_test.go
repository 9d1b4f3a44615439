package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestDecodeRoundTrip(t *testing.T) {
	want := Event{
		App: app("argocd", "guestbook"), Type: OperationPhaseChanged,
		Sync: "Synced", Health: "Healthy", Revision: strings.Repeat("a", 40),
		Phase: "Succeeded", Message: "successfully synced (all tasks run)",
		Time:   time.Date(2026, 11, 30, 2, 0, 0, 123, time.UTC),
		Origin: "0123456789abcdef", Seq: 42,
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"n":"guestbook"`) {
		t.Errorf("encoding %s does not use the compact keys", b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode(%s): %v", b, err)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
}

// Hostile input gives an error, never a panic or a half-valid event.
func TestDecodeRejects(t *testing.T) {
	for _, tc := range []struct {
		name, payload string
	}{
		{"empty", ``},
		{"not JSON", `hello`},
		{"array", `[1,2]`},
		{"truncated", `{"n":"a","t":"HealthChanged"`},
		{"wrong field type", `{"n":1,"t":"HealthChanged"}`},
		{"unknown type", `{"n":"a","t":"Explode"}`},
		{"no type", `{"n":"a"}`},
		{"no name", `{"t":"HealthChanged"}`},
		{"bad time", `{"n":"a","t":"HealthChanged","ts":"yesterday"}`},
		{"negative seq", `{"n":"a","t":"HealthChanged","q":-1}`},
		{"long name", `{"n":"` + strings.Repeat("a", 254) + `","t":"HealthChanged"}`},
		{"long status", `{"n":"a","t":"HealthChanged","h":"` + strings.Repeat("x", 65) + `"}`},
		{"long message", `{"n":"a","t":"HealthChanged","m":"` + strings.Repeat("x", MaxMessage+1) + `"}`},
		{"huge payload", `{"n":"a","t":"HealthChanged","x":"` + strings.Repeat("x", MaxPayload) + `"}`},
		{"deep nesting", `{"n":"a","t":"HealthChanged","x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.payload))
			if !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("Decode = %+v, %v; want ErrInvalidEvent", got, err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"n":"a","ns":"b","t":"HealthChanged","h":"Degraded","q":3}`))
	f.Add([]byte(`{"n":"","t":""}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("Decode accepted an invalid event: %v", err)
		}
	})
}

// Publish trims an over-long message instead of making an event receivers
// would drop, and rejects an unknown type.
func TestMemoryPublishValidates(t *testing.T) {
	m := NewMemory()
	s := m.Subscribe(t.Context(), Filter{}, Options{})
	long := ev("ns", "a", OperationPhaseChanged, "r")
	long.Message = strings.Repeat("é", MaxMessage) // 2 bytes a rune
	if err := m.Publish(t.Context(), long); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	d := <-s.Deliveries()
	if n := len(d.Event.Message); n > MaxMessage || n < MaxMessage-1 {
		t.Errorf("message trimmed to %d bytes, want about %d", n, MaxMessage)
	}
	if err := d.Event.Validate(); err != nil {
		t.Errorf("delivered event invalid: %v", err)
	}
	if err := m.Publish(context.Background(), ev("ns", "a", "Bogus", "r")); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("Publish of an unknown type = %v, want ErrInvalidEvent", err)
	}
}

// The collector reports the bus's counters under stable names.
func TestCollector(t *testing.T) {
	m := NewMemory()
	s := m.Subscribe(t.Context(), Filter{}, Options{Buffer: 1})
	for _, r := range []string{"1", "2", "3"} {
		if err := m.Publish(t.Context(), ev("ns", "app"+r, HealthChanged, r)); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	// A pedantic registry also checks that Collect matches Describe.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(m))
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			got[f.GetName()] = metric.GetCounter().GetValue() + metric.GetGauge().GetValue()
		}
	}
	want := map[string]float64{
		"graphcd_eventbus_subscribers":                1,
		"graphcd_eventbus_events_total":               3,
		"graphcd_eventbus_deliveries_total":           1,
		"graphcd_eventbus_coalesced_total":            0,
		"graphcd_eventbus_dropped_total":              2,
		"graphcd_eventbus_lagged_markers_total":       1,
		"graphcd_eventbus_redis_received_total":       0,
		"graphcd_eventbus_redis_invalid_total":        0,
		"graphcd_eventbus_redis_gaps_total":           0,
		"graphcd_eventbus_redis_publish_errors_total": 0,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("metrics (-got +want):\n%s", diff)
	}
}
