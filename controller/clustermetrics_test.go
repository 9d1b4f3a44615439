package controller

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/graphcd/graphcd/internal/statusboard"
)

// statesSource reports fixed cluster states.
type statesSource struct{ states []clusterState }

func (s *statesSource) clusterStates() []clusterState { return s.states }

// Two controllers in one process (parallel tests) that share a cluster
// report it once, from the one whose cache runs, whichever source the
// collector visits first.
func TestClusterCollectorPrefersTheRunningSource(t *testing.T) {
	at := time.Now()
	starting := &statesSource{[]clusterState{{server: InClusterServer, name: InClusterName, status: statusboard.Unknown, attempted: at}}}
	running := &statesSource{[]clusterState{{server: InClusterServer, name: InClusterName, status: statusboard.Successful, attempted: at.Add(time.Second)}}}
	never := &statesSource{[]clusterState{{server: "https://never.example", name: "never"}}}
	for range 20 {
		c := newClusterCollector("graphcd_")
		c.add(starting)
		c.add(running)
		c.add(never)
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		n, err := testutil.GatherAndCount(reg, "graphcd_cluster_connection_status")
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%d connection series, want 1: in-cluster once, and none for the never-attempted cluster", n)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if v := mfs[0].GetMetric()[0].GetGauge().GetValue(); v != 1 {
			t.Fatalf("in-cluster's connection status %v, want 1 from the running source", v)
		}
	}
}
