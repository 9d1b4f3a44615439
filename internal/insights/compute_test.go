package insights

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// t0 is the start of the scripted history: a Monday, 00:00 UTC.
var t0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

// at is t0 plus d days, h hours and m minutes, in Unix seconds.
func at(d, h, m int) int64 {
	return t0.Add(time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute).Unix()
}

func state(t int64, health, sync string) Record {
	return Record{Kind: KindState, At: t, Health: health, Sync: sync}
}

func syncRec(started, finished int64, phase, rev string, commit int64) Record {
	return Record{Kind: KindSync, Started: started, At: finished, Phase: phase, Revision: rev, CommitAt: commit}
}

// scripted is the history docs/insights.md walks through: four commits,
// a deploy that turns Degraded, a failed sync, a recovery, a re-sync of
// the same revision, and drift still open at the end.
func scripted() []Record {
	c1, c2, c3, c4 := at(0, 1, 0), at(1, 2, 0), at(1, 5, 0), at(2, 23, 0)
	return []Record{
		state(at(0, 1, 5), "Missing", SyncOutOfSync),
		syncRec(at(0, 1, 20), at(0, 1, 22), PhaseSucceeded, "c1", c1), // deploy 1, lead 22m
		state(at(0, 1, 23), HealthHealthy, SyncSynced),                // drift 18m
		state(at(1, 2, 10), HealthHealthy, SyncOutOfSync),
		syncRec(at(1, 2, 30), at(1, 2, 31), PhaseSucceeded, "c2", c2), // deploy 2, lead 31m
		state(at(1, 2, 35), HealthDegraded, SyncSynced),               // deploy 2 failed, drift 25m
		state(at(1, 5, 5), HealthDegraded, SyncOutOfSync),
		syncRec(at(1, 5, 10), at(1, 5, 13), PhaseFailed, "c3", c3),
		syncRec(at(1, 5, 20), at(1, 5, 24), PhaseSucceeded, "c3", c3), // deploy 3, lead 24m
		state(at(1, 5, 30), HealthHealthy, SyncSynced),                // restored after 2h55m, drift 25m
		state(at(2, 23, 30), HealthHealthy, SyncOutOfSync),
		syncRec(at(3, 0, 10), at(3, 0, 12), PhaseSucceeded, "c4", c4), // deploy 4, lead 1h12m
		state(at(3, 0, 13), HealthHealthy, SyncSynced),                // drift 30m + 13m
		{Kind: KindSync, Started: at(3, 5, 0) - 30, At: at(3, 5, 0), Phase: PhaseSucceeded, Revision: "c4", CommitAt: c4},
		state(at(4, 1, 0), HealthHealthy, SyncOutOfSync), // still OutOfSync at now
	}
}

func TestScriptedHistory(t *testing.T) {
	x := NewIndex()
	x.Set(App{Namespace: "graphcd", Name: "guestbook", Project: "default"}, scripted())
	res, err := x.Run(Query{From: t0, To: t0.Add(5 * 24 * time.Hour), Bucket: Day, Now: time.Unix(at(4, 3, 0), 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := Figures{
		Start: t0, Days: 5,
		Deploys: 4, DeploysPerDay: 0.8,
		FailedDeploys: 1, ChangeFailureRate: 0.25,
		// 22m, 31m, 24m, 72m: nearest-rank median 24m, p90 72m.
		LeadTimes: 4, LeadTimeMedian: 1440, LeadTimeP90: 4320,
		Failures: 1, Restores: 1, TimeToRestoreMedian: 10500,
		// 120, 60, 180, 240, 120, 30 s.
		Syncs: 6, SyncDurationMedian: 120, SyncDurationP90: 240,
		// 18m + 25m + 25m + 30m + 13m + the open 2h.
		Drift: 1080 + 1500 + 1500 + 1800 + 780 + 7200,
	}
	if diff := cmp.Diff(res.Total, want); diff != "" {
		t.Errorf("total (-got +want):\n%s", diff)
	}
	if res.Apps != 1 || len(res.Series) != 5 {
		t.Fatalf("apps %d, %d series points: want 1 and 5", res.Apps, len(res.Series))
	}
	day1 := Figures{
		Start: t0.Add(24 * time.Hour), Days: 1, Deploys: 2, DeploysPerDay: 2, FailedDeploys: 1, ChangeFailureRate: 0.5,
		LeadTimes: 2, LeadTimeMedian: 1440, LeadTimeP90: 1860, Failures: 1, Restores: 1, TimeToRestoreMedian: 10500,
		Syncs: 3, SyncDurationMedian: 180, SyncDurationP90: 240, Drift: 3000,
	}
	if diff := cmp.Diff(res.Series[1], day1); diff != "" {
		t.Errorf("day 1 (-got +want):\n%s", diff)
	}
	var deploys []int
	for _, f := range res.Series {
		deploys = append(deploys, f.Deploys)
	}
	if diff := cmp.Diff(deploys, []int{1, 2, 0, 1, 0}); diff != "" {
		t.Errorf("deploys per day (-got +want):\n%s", diff)
	}

	week, err := x.Run(Query{From: t0, To: t0.Add(5 * 24 * time.Hour), Bucket: Week, Now: time.Unix(at(4, 3, 0), 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(week.Series) != 1 || cmp.Diff(week.Series[0], want) != "" {
		t.Errorf("one week's bucket: got %+v, want %+v", week.Series, want)
	}

	// A range that starts on day 1 sees neither deploy 1 nor its drift.
	later, err := x.Run(Query{From: t0.Add(24 * time.Hour), To: t0.Add(2 * 24 * time.Hour), Bucket: Day})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(later.Total, day1); diff != "" {
		t.Errorf("day 1 alone (-got +want):\n%s", diff)
	}
}

func TestMatchSelectsApps(t *testing.T) {
	x := NewIndex()
	x.Set(App{Namespace: "graphcd", Name: "a", Project: "p1"}, scripted())
	x.Set(App{Namespace: "graphcd", Name: "b", Project: "p2"}, scripted())
	q := Query{From: t0, To: t0.Add(5 * 24 * time.Hour), Bucket: Day, Now: time.Unix(at(4, 3, 0), 0)}
	all, err := x.Run(q)
	if err != nil {
		t.Fatal(err)
	}
	q.Match = func(a App) bool { return a.Project == "p2" }
	one, err := x.Run(q)
	if err != nil {
		t.Fatal(err)
	}
	if all.Apps != 2 || all.Total.Deploys != 8 || one.Apps != 1 || one.Total.Deploys != 4 {
		t.Errorf("all: %d apps %d deploys; p2: %d apps %d deploys; want 2/8 and 1/4", all.Apps, all.Total.Deploys, one.Apps, one.Total.Deploys)
	}
	x.Delete(Key{"graphcd", "a"})
	q.Match = nil
	if after, _ := x.Run(q); after.Apps != 1 {
		t.Errorf("after Delete: %d apps, want 1", after.Apps)
	}
}

func TestRunRefusesBadQueries(t *testing.T) {
	x := NewIndex()
	for name, q := range map[string]Query{
		"reversed": {From: t0, To: t0.Add(-time.Hour), Bucket: Day},
		"too long": {From: t0, To: t0.Add(200 * 24 * time.Hour), Bucket: Day},
		"bucket":   {From: t0, To: t0.Add(time.Hour), Bucket: 3},
	} {
		if _, err := x.Run(q); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestEncodeDecodeTrim(t *testing.T) {
	recs := scripted()
	got, err := Decode(Encode(recs))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, recs); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
	if _, err := Decode("{\"k\":\"sync\",\"t\":5}\n{\"k\":\"nope\",\"t\":1}\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad kind: got %v, want an error naming line 2", err)
	}
	if _, err := Decode("not json\n"); err == nil {
		t.Error("bad line: no error")
	}
	// 91 days after t0, records of day 0 are past the retention.
	trimmed := Trim(scripted(), t0.Add(Retention+24*time.Hour+2*time.Hour))
	if len(trimmed) != len(recs)-3 || trimmed[0].At != at(1, 2, 10) {
		t.Errorf("trim kept %d records from %d; want %d from %d", len(trimmed), trimmed[0].At, len(recs)-3, at(1, 2, 10))
	}
	many := make([]Record, MaxRecords+10)
	for i := range many {
		many[i] = state(t0.Unix()+int64(i), HealthHealthy, SyncSynced)
	}
	if kept := Trim(many, t0.Add(time.Hour)); len(kept) != MaxRecords || kept[0].At != t0.Unix()+10 {
		t.Errorf("cap kept %d records from %d", len(kept), kept[0].At)
	}
}

func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		s    []int32
		q    float64
		want int32
	}{
		{nil, 0.5, 0},
		{[]int32{7}, 0.9, 7},
		{[]int32{4, 1, 3, 2}, 0.5, 2},
		{[]int32{4, 1, 3, 2}, 0.9, 4},
		{[]int32{5, 1, 4, 2, 3}, 0.5, 3},
	} {
		if got := quantile(append([]int32(nil), tc.s...), tc.q); got != tc.want {
			t.Errorf("quantile(%v, %v) = %d, want %d", tc.s, tc.q, got, tc.want)
		}
	}
	// Quickselect against a sort on a large input with duplicates.
	s := make([]int32, 10001)
	for i := range s {
		s[i] = int32((i * 7919) % 1000)
	}
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	for _, q := range []float64{0.1, 0.5, 0.9, 1} {
		want := sorted[int(math.Ceil(q*float64(len(s))))-1]
		if got := quantile(slices.Clone(s), q); got != want {
			t.Errorf("quantile %v of 10001 samples = %d, want %d", q, got, want)
		}
	}
}
