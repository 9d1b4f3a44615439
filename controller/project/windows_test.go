package project

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// everyApp is the target most window tests evaluate for.
var everyApp = WindowTarget{AppName: "guestbook", AppNamespace: "graphcd", Server: "https://kubernetes.default.svc", ClusterName: "in-cluster", Namespace: "shop"}

func TestWindowActive(t *testing.T) {
	type check struct {
		at         string
		active     bool
		start, end string // the open occurrence, or the next one
	}
	tests := []struct {
		name                         string
		schedule, duration, timeZone string
		checks                       []check
	}{
		{"daily, UTC", "0 22 * * *", "1h", "", []check{
			{"2026-01-05T21:59:59Z", false, "2026-01-05T22:00:00Z", "2026-01-05T23:00:00Z"},
			{"2026-01-05T22:00:00Z", true, "2026-01-05T22:00:00Z", "2026-01-05T23:00:00Z"},
			{"2026-01-05T22:59:59.999Z", true, "2026-01-05T22:00:00Z", "2026-01-05T23:00:00Z"},
			{"2026-01-05T23:00:00Z", false, "2026-01-06T22:00:00Z", "2026-01-06T23:00:00Z"},
		}},
		{"across midnight", "0 22 * * *", "4h", "", []check{
			{"2026-01-06T01:30:00Z", true, "2026-01-05T22:00:00Z", "2026-01-06T02:00:00Z"},
			{"2026-01-06T02:00:00Z", false, "2026-01-06T22:00:00Z", "2026-01-07T02:00:00Z"},
		}},
		{"weekdays", "0 9 * * 1-5", "8h", "", []check{
			{"2026-01-10T10:00:00Z", false, "2026-01-12T09:00:00Z", "2026-01-12T17:00:00Z"}, // Saturday
			{"2026-01-12T16:59:00Z", true, "2026-01-12T09:00:00Z", "2026-01-12T17:00:00Z"},  // Monday
			{"2026-01-12T17:00:00Z", false, "2026-01-13T09:00:00Z", "2026-01-13T17:00:00Z"},
		}},
		{"descriptor", "@daily", "30m", "", []check{
			{"2026-01-06T00:29:00Z", true, "2026-01-06T00:00:00Z", "2026-01-06T00:30:00Z"},
		}},
		{"longer than the period: always open", "0 * * * *", "2h", "", []check{
			{"2026-01-06T10:30:00Z", true, "2026-01-06T09:00:00Z", "2026-01-06T11:00:00Z"},
		}},
		{"Berlin in winter", "0 22 * * *", "1h", "Europe/Berlin", []check{
			{"2026-01-05T20:30:00Z", false, "2026-01-05T22:00:00+01:00", "2026-01-05T23:00:00+01:00"},
			{"2026-01-05T21:30:00Z", true, "2026-01-05T22:00:00+01:00", "2026-01-05T23:00:00+01:00"},
			{"2026-01-05T22:00:00Z", false, "2026-01-06T22:00:00+01:00", "2026-01-06T23:00:00+01:00"},
		}},
		{"Berlin in summer", "0 22 * * *", "1h", "Europe/Berlin", []check{
			{"2026-07-06T20:30:00Z", true, "2026-07-06T22:00:00+02:00", "2026-07-06T23:00:00+02:00"},
			{"2026-07-06T21:30:00Z", false, "2026-07-07T22:00:00+02:00", "2026-07-07T23:00:00+02:00"},
		}},
		{"half-hour offset across midnight", "0 0 * * *", "1h", "Asia/Kolkata", []check{
			{"2026-01-05T18:45:00Z", true, "2026-01-06T00:00:00+05:30", "2026-01-06T01:00:00+05:30"},
			{"2026-01-05T19:30:00Z", false, "2026-01-07T00:00:00+05:30", "2026-01-07T01:00:00+05:30"},
		}},
		// Clocks in Berlin jump from 02:00 to 03:00 on 2026-03-29 (01:00 UTC).
		{"start in the skipped hour opens when the clock passes it", "30 2 * * *", "1h", "Europe/Berlin", []check{
			{"2026-03-29T00:59:00Z", false, "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"}, // 01:59 CET
			{"2026-03-29T01:00:00Z", true, "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"},  // 03:00 CEST
			{"2026-03-29T01:29:00Z", true, "2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00"},
			{"2026-03-29T01:30:00Z", false, "2026-03-30T02:30:00+02:00", "2026-03-30T03:30:00+02:00"}, // 03:30 CEST
		}},
		{"spanning the skipped hour ends on the clock", "0 1 * * *", "2h", "Europe/Berlin", []check{
			{"2026-03-29T00:59:00Z", true, "2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00"},  // 01:59 CET
			{"2026-03-29T01:00:00Z", false, "2026-03-30T01:00:00+02:00", "2026-03-30T03:00:00+02:00"}, // 03:00 CEST
		}},
		// Clocks in Berlin go back from 03:00 to 02:00 on 2026-10-25 (01:00 UTC).
		{"start in the repeated hour opens in both passes", "30 2 * * *", "30m", "Europe/Berlin", []check{
			{"2026-10-25T00:45:00Z", true, "2026-10-25T02:30:00+02:00", "2026-10-25T03:00:00+01:00"},  // 02:45 CEST
			{"2026-10-25T01:15:00Z", false, "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"}, // 02:15 CET
			{"2026-10-25T01:45:00Z", true, "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"},  // 02:45 CET
			{"2026-10-25T02:00:00Z", false, "2026-10-26T02:30:00+01:00", "2026-10-26T03:00:00+01:00"}, // 03:00 CET
		}},
		// Lord Howe Island moves its clocks by 30 minutes, from 02:00 to
		// 02:30 on 2026-10-04 (15:30 UTC the day before).
		{"half-hour DST shift", "15 2 * * *", "1h", "Australia/Lord_Howe", []check{
			{"2026-10-03T15:29:00Z", false, "2026-10-04T02:30:00+11:00", "2026-10-04T03:15:00+11:00"},
			{"2026-10-03T15:30:00Z", true, "2026-10-04T02:30:00+11:00", "2026-10-04T03:15:00+11:00"},
			{"2026-10-03T16:15:00Z", false, "2026-10-05T02:15:00+11:00", "2026-10-05T03:15:00+11:00"},
		}},
		{"daily window on the night clocks go back", "0 22 * * *", "6h", "Europe/Berlin", []check{
			{"2026-10-25T01:30:00Z", true, "2026-10-24T22:00:00+02:00", "2026-10-25T04:00:00+01:00"},  // 02:30 CET
			{"2026-10-25T03:00:00Z", false, "2026-10-25T22:00:00+01:00", "2026-10-26T04:00:00+01:00"}, // 04:00 CET
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustCompile(t, v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{{
				Kind: "deny", Schedule: tt.schedule, Duration: tt.duration, TimeZone: tt.timeZone, Applications: []string{"*"},
			}}})
			for _, c := range tt.checks {
				st := r.SyncWindows(everyApp, mustTime(t, c.at))
				if len(st.Windows) != 1 {
					t.Fatalf("%s: %d windows apply, want 1", c.at, len(st.Windows))
				}
				w := st.Windows[0]
				got := [3]string{w.Start.Format(time.RFC3339), w.End.Format(time.RFC3339)}
				if w.Active != c.active || got != [3]string{c.start, c.end} {
					t.Errorf("at %s: active %v %s..%s, want active %v %s..%s", c.at, w.Active, got[0], got[1], c.active, c.start, c.end)
				}
			}
		})
	}
}

func TestSyncAllowed(t *testing.T) {
	deny := func(schedule string, manual bool) v1alpha1.SyncWindow {
		return v1alpha1.SyncWindow{Kind: "deny", Schedule: schedule, Duration: "1h", Applications: []string{"*"}, ManualSync: manual}
	}
	allow := func(schedule string, manual bool) v1alpha1.SyncWindow {
		return v1alpha1.SyncWindow{Kind: "allow", Schedule: schedule, Duration: "1h", Applications: []string{"*"}, ManualSync: manual}
	}
	const (
		at      = "2026-01-05T22:30:00Z"
		open    = "0 22 * * *" // open at 22:30
		closed  = "0 9 * * *"  // next opens 2026-01-06T09:00
		closed2 = "0 6 * * *"  // next opens 2026-01-06T06:00
	)
	tests := []struct {
		name         string
		windows      []v1alpha1.SyncWindow
		auto, manual string // "" allowed, else the message or "~substring"
	}{
		{"no windows", nil, "", ""},
		{"window for another app", []v1alpha1.SyncWindow{{Kind: "deny", Schedule: open, Duration: "1h", Applications: []string{"other"}}}, "", ""},
		{"closed deny", []v1alpha1.SyncWindow{deny(closed, false)}, "", ""},
		{"open deny", []v1alpha1.SyncWindow{{Kind: "deny", Schedule: open, Duration: "1h", Applications: []string{"*"}, Description: "change freeze"}},
			`sync blocked by deny window 0 (schedule '0 22 * * *', duration 1h, time zone UTC: "change freeze"), active from 2026-01-05T22:00:00Z until 2026-01-05T23:00:00Z`,
			`manual sync blocked by deny window 0 (schedule '0 22 * * *', duration 1h, time zone UTC: "change freeze"), active from 2026-01-05T22:00:00Z until 2026-01-05T23:00:00Z; manual sync is not enabled for it`},
		{"open deny with manualSync", []v1alpha1.SyncWindow{deny(open, true)},
			"automated sync blocked by deny window 0 (schedule '0 22 * * *', duration 1h, time zone UTC), active from 2026-01-05T22:00:00Z until 2026-01-05T23:00:00Z; manual syncs are allowed",
			""},
		{"manual needs manualSync on every open deny", []v1alpha1.SyncWindow{deny(open, true), deny("30 22 * * *", false)},
			"~deny window 1", "~manual sync blocked by deny window 1 (schedule '30 22 * * *'"},
		{"open allow", []v1alpha1.SyncWindow{allow(open, false)}, "", ""},
		{"deny wins over allow", []v1alpha1.SyncWindow{allow(open, false), deny(open, false)}, "~sync blocked by deny window 1", "~manual sync blocked by deny window 1"},
		{"deny wins over allow with manualSync", []v1alpha1.SyncWindow{allow(open, true), deny(open, false)}, "~deny window 1", "~deny window 1"},
		{"closed allow blocks", []v1alpha1.SyncWindow{allow(closed, false)},
			"sync blocked outside allow windows: allow window 0 (schedule '0 9 * * *', duration 1h, time zone UTC) opens next at 2026-01-06T09:00:00Z",
			"manual sync blocked outside allow windows: allow window 0 (schedule '0 9 * * *', duration 1h, time zone UTC) opens next at 2026-01-06T09:00:00Z"},
		{"closed allow names the next to open", []v1alpha1.SyncWindow{allow(closed, false), allow(closed2, false)},
			"~allow window 1 (schedule '0 6 * * *', duration 1h, time zone UTC) opens next at 2026-01-06T06:00:00Z", "~allow window 1"},
		{"closed allow with manualSync", []v1alpha1.SyncWindow{allow(closed, true)},
			"automated sync blocked outside allow windows: allow window 0 (schedule '0 9 * * *', duration 1h, time zone UTC) opens next at 2026-01-06T09:00:00Z; manual syncs are allowed", ""},
		{"one closed allow with manualSync is enough", []v1alpha1.SyncWindow{allow(closed, false), allow(closed2, true)}, "~automated sync blocked outside allow windows", ""},
		{"one open allow is enough", []v1alpha1.SyncWindow{allow(closed, false), allow(open, false)}, "", ""},
		{"closed allow and closed deny", []v1alpha1.SyncWindow{allow(closed, false), deny(closed2, false)}, "~outside allow windows", "~outside allow windows"},
		{"open allow and closed deny", []v1alpha1.SyncWindow{allow(open, false), deny(closed, false)}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := v1alpha1.AppProjectSpec{SyncWindows: tt.windows}
			r := mustCompile(t, spec)
			now := mustTime(t, at)
			checkDecision(t, r.SyncAllowed(everyApp, now, false), tt.auto)
			checkDecision(t, r.SyncAllowed(everyApp, now, true), tt.manual)
			st, err := SyncWindows(newProject(spec), everyApp, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Allowed(false); (err == nil) != (tt.auto == "") {
				t.Errorf("SyncWindows(...).Allowed = %v, Rules.SyncAllowed disagrees", err)
			}
		})
	}
}

func TestWindowSelection(t *testing.T) {
	win := func(and bool, apps, clusters, namespaces []string) v1alpha1.SyncWindow {
		return v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 22 * * *", Duration: "1h",
			Applications: apps, Clusters: clusters, Namespaces: namespaces, UseAndOperator: and}
	}
	target := func(app, ns string) WindowTarget {
		return WindowTarget{AppName: app, AppNamespace: "graphcd", Server: "https://kubernetes.default.svc", ClusterName: "in-cluster", Namespace: ns}
	}
	tests := []struct {
		name   string
		window v1alpha1.SyncWindow
		target WindowTarget
		want   bool
	}{
		{"or: app matches", win(false, []string{"prod-*"}, nil, []string{"kube-*"}), target("prod-web", "shop"), true},
		{"or: namespace matches", win(false, []string{"prod-*"}, nil, []string{"kube-*"}), target("dev-web", "kube-system"), true},
		{"or: neither", win(false, []string{"prod-*"}, nil, []string{"kube-*"}), target("dev-web", "shop"), false},
		{"and: both", win(true, []string{"prod-*"}, nil, []string{"kube-*"}), target("prod-web", "kube-system"), true},
		{"and: one", win(true, []string{"prod-*"}, nil, []string{"kube-*"}), target("prod-web", "shop"), false},
		{"and: unset lists do not count", win(true, []string{"prod-*"}, nil, nil), target("prod-web", "shop"), true},
		{"cluster by name", win(false, nil, []string{"in-cluster"}, nil), target("a", "b"), true},
		{"cluster by server", win(false, nil, []string{"https://kubernetes.default.*"}, nil), target("a", "b"), true},
		{"cluster miss", win(false, nil, []string{"prod-*"}, nil), target("a", "b"), false},
		{"cluster star needs a cluster", win(false, nil, []string{"*"}, nil), WindowTarget{AppName: "a"}, false},
		{"namespace star matches cluster-scoped apps", win(false, nil, nil, []string{"*"}), target("a", ""), true},
		{"qualified app name", win(false, []string{"team-a/*"}, nil, nil), WindowTarget{AppName: "web", AppNamespace: "team-a"}, true},
		{"qualified app name miss", win(false, []string{"team-a/*"}, nil, nil), WindowTarget{AppName: "web", AppNamespace: "graphcd"}, false},
		{"app names are case-sensitive", win(false, []string{"Prod-*"}, nil, nil), target("prod-web", "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A window for another app first, so IDs follow spec order.
			other := win(false, []string{"nobody"}, nil, nil)
			r := mustCompile(t, v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{other, tt.window}})
			st := r.SyncWindows(tt.target, mustTime(t, "2026-01-05T12:00:00Z"))
			var ids []int
			for _, w := range st.Windows {
				ids = append(ids, w.ID)
			}
			var want []int
			if tt.want {
				want = []int{1}
			}
			if diff := cmp.Diff(ids, want); diff != "" {
				t.Errorf("windows that apply (-got +want):\n%s", diff)
			}
		})
	}
}

// TestWindowRemembersStartsCorrectly walks time back and forth across
// window boundaries: the remembered start must always be the one a fresh
// schedule search finds.
func TestWindowRemembersStartsCorrectly(t *testing.T) {
	r := mustCompile(t, benchSpec())
	base := mustTime(t, "2026-03-27T00:00:00Z") // across the March DST change in Berlin and New York
	var steps []time.Duration
	for d := time.Duration(0); d < 4*24*time.Hour; d += 7*time.Minute + 13*time.Second {
		steps = append(steps, d)
	}
	for i := len(steps) - 1; i >= 0; i -= 3 {
		steps = append(steps, steps[i])
	}
	for _, d := range steps {
		at := base.Add(d)
		for _, w := range r.windows {
			clock := wallClock(at.In(w.loc))
			if got, want := w.startAfter(clock), w.schedule.Next(clock.Add(-w.duration)); !got.Equal(want) {
				t.Fatalf("window %d at %s: remembered start %s, schedule says %s", w.index, at, got, want)
			}
		}
	}
}
