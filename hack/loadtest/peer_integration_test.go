//go:build integration

package main

import (
	"context"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The Argo CD side of make scale-argocd, small: Argo CD's application
// controller and repository server (bench/argocd/build.sh builds them
// once per machine) with Redis on the package's cluster, 30 auto-synced
// apps on one destination cluster. It asserts what the side-by-side
// tables rest on: every app Synced and Healthy with one sync in its
// history, each app's ConfigMap on its cluster, the processes measured,
// no panic.
func TestArgoCDSide(t *testing.T) {
	build := exec.CommandContext(t.Context(), "bash", filepath.Join(localcluster.RepoRoot(), "bench", "argocd", "build.sh"))
	out, err := build.Output()
	if err != nil {
		t.Fatalf("bench/argocd/build.sh: %v", err)
	}
	o := scaleOptions{
		apps: 30, clusters: 1, steady: time.Second, dir: t.TempDir(),
		log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	// A controller that never syncs fails the test rather than hang it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	r, err := runArgoCD(ctx, testCluster, o, strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.failures {
		t.Error(f)
	}
	if r.all == 0 || r.clusterApps["cluster-00"] != o.apps {
		t.Errorf("all reconciled after %v, ConfigMaps on cluster-00: %d of %d", r.all, r.clusterApps["cluster-00"], o.apps)
	}
	var names []string
	for _, f := range r.roles {
		names = append(names, f.name)
		if f.peakRSS == 0 {
			t.Errorf("%s: no peak RSS", f.name)
		}
	}
	if got := strings.Join(names, ","); got != "argocd-repo-server,argocd-application-controller,redis" {
		t.Errorf("measured %s", got)
	}
	if r.apiRequests == 0 {
		t.Error("no kube-apiserver request counted")
	}
}
