package insights

import (
	"fmt"
	"testing"
	"time"
)

// history90 is 90 days of an app that deploys daily: a push
// (OutOfSync), a sync, Healthy and Synced again; every tenth deploy of
// the app turns Degraded and recovers an hour later.
func history90(app int, end time.Time) []Record {
	var out []Record
	start := end.Add(-90 * 24 * time.Hour).Unix()
	for d := range 90 {
		day := start + int64(d)*daySeconds + int64(app%3600)
		rev := fmt.Sprintf("r%d", d)
		out = append(out,
			state(day, HealthHealthy, SyncOutOfSync),
			syncRec(day+300, day+300+int64(30+app%60), PhaseSucceeded, rev, day-int64(600+app%1800)),
		)
		if (d+app)%10 == 0 {
			out = append(out, state(day+400, HealthDegraded, SyncSynced), state(day+4000, HealthHealthy, SyncSynced))
		} else {
			out = append(out, state(day+400, HealthHealthy, SyncSynced))
		}
	}
	return out
}

// BenchmarkInsights10000Apps90Days answers installation-wide insights,
// per day, over 90 days of 10,000 apps that each deploy daily (the
// performance target of docs/insights.md: 200 ms).
func BenchmarkInsights10000Apps90Days(b *testing.B) {
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	x := NewIndex()
	for i := range 10000 {
		x.Set(App{Namespace: "graphcd", Name: fmt.Sprintf("app-%05d", i), Project: fmt.Sprintf("p%d", i%20)}, history90(i, end))
	}
	q := Query{From: end.Add(-90 * 24 * time.Hour), To: end, Bucket: Day, Now: end,
		Match: func(a App) bool { return a.Namespace == "graphcd" }}
	b.ResetTimer()
	for b.Loop() {
		res, err := x.Run(q)
		if err != nil {
			b.Fatal(err)
		}
		if res.Total.Deploys != 900000 {
			b.Fatalf("%d deploys, want 900000", res.Total.Deploys)
		}
	}
}
