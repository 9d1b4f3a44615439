//go:build integration

package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/graphcdbin"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var testCluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &testCluster))
}

// The short soak of make test: the code of make soak with small numbers
// (50 apps, 20 subscribers, 2 minutes of load) against a real graphcd
// server process. It asserts what must hold at any size: no client
// errors, every event in order per app, no duplicate SyncStatusChanged,
// every app's last push seen Synced by its subscribers, and the server's
// goroutines back to their baseline once the load ends. The RSS and
// goroutine slopes are reported, not asserted: two minutes on a shared
// machine say little about them (make soak runs 30 minutes).
func TestShortSoak(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "graphcd")
	if err := graphcdbin.Build(t.Context(), bin); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	o := soakOptions{
		graphcd: bin, apps: 50, subscribers: 20,
		duration: 2 * time.Minute, warmup: 30 * time.Second,
		pushEvery: 10 * time.Second, loginEvery: time.Second, sampleEvery: 2 * time.Second,
		out: out, log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})), stderr: t.Output(),
	}
	r, err := runSoak(t.Context(), testCluster, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + r.report())
	for _, f := range r.failures {
		t.Error(f)
	}
	// The figures, and that the files were written and are what they say.
	csv, err := os.ReadFile(filepath.Join(out, "soak.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csv), "\n"); lines != len(r.samples)+1 {
		t.Errorf("soak.csv has %d lines for %d samples", lines, len(r.samples))
	}
	for _, name := range []string{"soak-rss.svg", "soak-goroutines.svg"} {
		svg, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(svg), "<svg ") || !strings.Contains(string(svg), "<polyline") {
			t.Errorf("%s is no line chart:\n%.300s", name, svg)
		}
	}
	// The heap profiles, read through the server's --profile-listen.
	for _, name := range []string{"heap-warmup.pb.gz", "heap-end.pb.gz"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 1000 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s is no gzipped profile (%d bytes)", name, len(b))
		}
	}
}
