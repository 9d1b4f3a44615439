//go:build integration

package console

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/insights"
)

// TestInsightsPages drives the Insights dashboard and the application's
// Insights tab in Chromium against the real server (see
// web/e2e/insights.mjs). The app "shop" has the delivery log the
// controller would have written over the last week: three deploys (lead
// times 72, 31 and 24 minutes), the second turning Degraded and recovering
// an hour later, syncs of 2, 1 and 4 minutes and 12 minutes of drift. Both
// pages must show the figures computed by hand from it: 3 deploys (0.43 a
// day), change failure rate 33 %, lead time median 31 min (p90 1 h 12
// min), time to restore 1 h, sync duration 2 min (p90 4 min), and one
// bar per day with a failed deploy on the third.
func TestInsightsPages(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, false)
	kube := newKube(t)
	createDefaultProject(t, kube, ns)
	createApp(t, kube, ns, "shop", "https://git.example.com/apps.git", "shop")

	day := 24 * time.Hour
	t0 := time.Now().UTC().Truncate(day).Add(-6 * day)
	at := func(d, h, m int) int64 {
		return t0.Add(time.Duration(d)*day + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute).Unix()
	}
	state := func(t int64, health, sync string) insights.Record {
		return insights.Record{Kind: insights.KindState, At: t, Health: health, Sync: sync}
	}
	deploy := func(started, finished int64, rev string, commit int64) insights.Record {
		return insights.Record{Kind: insights.KindSync, Started: started, At: finished, Phase: insights.PhaseSucceeded, Revision: rev, CommitAt: commit}
	}
	log := []insights.Record{
		state(at(0, 10, 0), insights.HealthHealthy, insights.SyncOutOfSync),
		deploy(at(0, 10, 10), at(0, 10, 12), "c1", at(0, 9, 0)),
		state(at(0, 10, 12), insights.HealthHealthy, insights.SyncSynced),
		deploy(at(2, 9, 30), at(2, 9, 31), "c2", at(2, 9, 0)),
		state(at(2, 9, 35), insights.HealthDegraded, insights.SyncSynced),
		state(at(2, 10, 35), insights.HealthHealthy, insights.SyncSynced),
		deploy(at(4, 8, 20), at(4, 8, 24), "c3", at(4, 8, 0)),
	}
	store := &insights.Store{Client: cluster.Client, Namespace: ns}
	if err := store.Append(t.Context(), insights.App{Namespace: ns, Name: "shop", Project: "default"}, log, time.Now()); err != nil {
		t.Fatal(err)
	}

	runScript(t, "e2e/insights.mjs", base, ns)
	t.Logf("screenshots of the Insights page and tab: %s", filepath.Join(t.ArtifactDir(), "*-insights-*.png"))
}
