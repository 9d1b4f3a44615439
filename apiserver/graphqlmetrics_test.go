package apiserver

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/resolvers"
)

// Operations count by name and type; names past the bound, too long or
// not GraphQL names count as "(other)", unnamed ones as "(unnamed)".
func TestGraphQLOperationMetrics(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	post := func(query string) {
		t.Helper()
		if code, body := postGraphQL(t, ts.URL, fmt.Sprintf(`{"query":%q}`, query)); code != 200 || !strings.Contains(body, `"data"`) {
			t.Fatalf("%s: %d %s", query, code, body)
		}
	}
	post("query Version { version { version } }")
	post("query Version { version { version } }")
	post("{ version { version } }")
	post("query " + strings.Repeat("Long", 20) + " { version { version } }")
	for i := range maxOperationNames + 5 {
		post(fmt.Sprintf("query Op%d { version { version } }", i))
	}

	_, text, _ := get(t, ts.URL+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	counts := map[string]float64{}
	for _, m := range families["graphcd_graphql_requests_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["type"] != "query" || labels["failed"] != "false" {
			t.Errorf("series %v, want type query, failed false", labels)
		}
		counts[labels["operation"]] = m.GetCounter().GetValue()
	}
	// Version and Op0 ... Op198 fill the bound.
	if counts["Version"] != 2 || counts["(unnamed)"] != 1 || counts["(other)"] != 7 || len(counts) != maxOperationNames+2 {
		t.Errorf("operations: Version %v, (unnamed) %v, (other) %v, %d names; want 2, 1, 7, %d",
			counts["Version"], counts["(unnamed)"], counts["(other)"], len(counts), maxOperationNames+2)
	}
	if n := len(families["graphcd_graphql_request_duration_seconds"].GetMetric()); n != maxOperationNames+2 {
		t.Errorf("duration series = %d, want %d", n, maxOperationNames+2)
	}
}

// Each open subscription counts in graphcd_websocket_subscribers until
// its socket closes.
func TestWebsocketSubscribersGauge(t *testing.T) {
	t.Parallel()
	bus := eventbus.NewMemory()
	ts, _ := newTestServer(t, Options{API: resolvers.Config{Build: testBuild, Events: bus}})
	q := `subscription Follow { applicationEvents { name } }`
	a, b := subscribe(t, ts.URL, q), subscribe(t, ts.URL, q)
	defer func() { _ = b.Close() }()
	waitMetric := func(want string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute) // a hang fails, not the timing
		for {
			_, text, _ := get(t, ts.URL+"/metrics")
			if strings.Contains(text, want+"\n") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("metrics lack %q", want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitMetric("graphcd_websocket_subscribers 2")
	waitMetric(`graphcd_graphql_requests_total{failed="false",operation="Follow",type="subscription"} 2`)
	_ = a.Close()
	waitMetric("graphcd_websocket_subscribers 1")
}
