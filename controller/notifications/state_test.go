package notifications

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)

// occ is an occurrence of trigger t's only condition to webhook "hook".
func occ(trigger string, holds, once bool, oncePer string) Occurrence {
	o := Occurrence{Trigger: trigger, Condition: "[0].c", Once: once, Holds: holds, Templates: []string{"tpl"},
		Destination: services.Destination{Service: "hook"}}
	if holds {
		o.Key = DeliveryKey(trigger, o.Condition, oncePer, "hook", "")
	}
	return o
}

func planAt(now time.Time, st State, occs ...Occurrence) Plan {
	return Planner{Now: now, StaleAfter: time.Minute}.Plan(st, occs)
}

func phases(st State) map[string]string {
	out := map[string]string{}
	for k, d := range st {
		out[k] = fmt.Sprintf("%s/%d", d.Phase, d.Attempts)
		if d.Cleared {
			out[k] += "/cleared"
		}
	}
	return out
}

// A condition that holds is claimed once; sent, it is not claimed again
// while it holds; when it stops holding its record goes, and it notifies
// again the next time it holds.
func TestPlanClaimSentDrop(t *testing.T) {
	st := State{}
	failed := occ("on-sync-failed", true, false, "")
	plan := planAt(t0, st, failed)
	if d := cmp.Diff(plan.Claims, []string{failed.Key}); d != "" || !plan.Changed {
		t.Fatalf("claims (-got +want):\n%s", d)
	}
	if got := st[failed.Key].Phase; got != PhasePending {
		t.Fatalf("phase %s, want pending", got)
	}
	if plan := planAt(t0, st, failed); len(plan.Claims) != 0 || plan.Wait != time.Minute {
		t.Fatalf("a fresh pending claim was claimed again or not waited on: %+v", plan)
	}
	st.Sent(failed.Key, t0)
	if plan := planAt(t0.Add(time.Hour), st, failed); len(plan.Claims) != 0 || plan.Changed {
		t.Fatalf("a sent condition that still holds was claimed again: %+v", plan)
	}
	if plan := planAt(t0, st, occ("on-sync-failed", false, false, "")); !plan.Changed || len(st) != 0 {
		t.Fatalf("the record of a condition that stopped holding stayed: %v", phases(st))
	}
	if plan := planAt(t0, st, failed); len(plan.Claims) != 1 {
		t.Fatalf("a condition holding again was not claimed: %+v", plan)
	}
}

// With oncePer, a record stays when the condition stops holding: the
// same value never notifies twice, a new one does.
func TestPlanOncePer(t *testing.T) {
	st := State{}
	a := occ("on-deployed", true, true, "rev-a")
	planAt(t0, st, a)
	st.Sent(a.Key, t0)
	planAt(t0, st, occ("on-deployed", false, true, ""))
	if plan := planAt(t0, st, a); len(plan.Claims) != 0 || len(st) != 1 {
		t.Fatalf("rev-a notified twice: %+v %v", plan, phases(st))
	}
	b := occ("on-deployed", true, true, "rev-b")
	if plan := planAt(t0, st, b); len(plan.Claims) != 1 || plan.Claims[0] != b.Key {
		t.Fatalf("rev-b not claimed: %+v", plan)
	}
}

// A failed send is tried again after its backoff (5 s, 10 s ...), and
// after MaxAttempts it is dead: kept with its error, not sent again while
// the condition holds, cleared when it stops, claimed anew when it holds
// again.
func TestPlanRetriesAndDeadLetter(t *testing.T) {
	st := State{}
	o := occ("on-sync-failed", true, false, "")
	now := t0
	planAt(now, st, o)
	for attempt := 1; attempt <= MaxAttempts; attempt++ {
		dead := st.Failed(o.Key, "HTTP 500", now)
		if dead != (attempt == MaxAttempts) {
			t.Fatalf("attempt %d: dead %v", attempt, dead)
		}
		if dead {
			break
		}
		plan := planAt(now.Add(Backoff(attempt)-time.Millisecond), st, o)
		if len(plan.Claims) != 0 || plan.Wait != time.Millisecond {
			t.Fatalf("attempt %d: retried before its backoff: %+v", attempt, plan)
		}
		now = now.Add(Backoff(attempt))
		if plan := planAt(now, st, o); len(plan.Claims) != 1 {
			t.Fatalf("attempt %d: not retried after its backoff: %+v", attempt, plan)
		}
	}
	want := map[string]string{o.Key: fmt.Sprintf("dead/%d", MaxAttempts)}
	if d := cmp.Diff(phases(st), want); d != "" {
		t.Fatalf("(-got +want):\n%s", d)
	}
	if st[o.Key].Error != "HTTP 500" {
		t.Errorf("dead letter error %q", st[o.Key].Error)
	}
	if plan := planAt(now.Add(time.Hour), st, o); len(plan.Claims) != 0 {
		t.Fatalf("a dead letter was sent again: %+v", plan)
	}
	planAt(now, st, occ("on-sync-failed", false, false, ""))
	if d := cmp.Diff(phases(st), map[string]string{o.Key: fmt.Sprintf("dead/%d/cleared", MaxAttempts)}); d != "" {
		t.Fatalf("(-got +want):\n%s", d)
	}
	if plan := planAt(now, st, o); len(plan.Claims) != 1 || st[o.Key].Attempts != 1 || st[o.Key].Error != "" {
		t.Fatalf("not claimed anew: %+v %v", plan, phases(st))
	}
	if got := []time.Duration{Backoff(1), Backoff(2), Backoff(6), Backoff(20)}; !slices.Equal(got,
		[]time.Duration{5 * time.Second, 10 * time.Second, 160 * time.Second, 5 * time.Minute}) {
		t.Errorf("backoffs %v", got)
	}
}

// A pending claim older than StaleAfter was abandoned (a process stopped
// mid-send) and is sent again, counted as the same attempt; a claim or a
// failure whose subscription is gone is dropped.
func TestPlanAbandonedAndUnsubscribed(t *testing.T) {
	st := State{}
	o := occ("on-sync-failed", true, false, "")
	planAt(t0, st, o)
	plan := planAt(t0.Add(2*time.Minute), st, o)
	if len(plan.Claims) != 1 || st[o.Key].Attempts != 1 || !st[o.Key].Time.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("abandoned claim: %+v %v", plan, phases(st))
	}
	st.Failed(o.Key, "boom", t0)
	if plan := planAt(t0.Add(time.Hour), st); !plan.Changed || len(st) != 0 {
		t.Fatalf("unsubscribed failure kept: %v", phases(st))
	}
}

// The rate limit holds claims back and says how long to wait.
func TestPlanRateLimit(t *testing.T) {
	st := State{}
	allowed := 1
	p := Planner{Now: t0, StaleAfter: time.Minute, Allow: func(string) (bool, time.Duration) {
		allowed--
		return allowed >= 0, 100 * time.Millisecond
	}}
	plan := p.Plan(st, []Occurrence{occ("a", true, false, ""), occ("b", true, false, "")})
	if len(plan.Claims) != 1 || len(st) != 1 || plan.Wait != 100*time.Millisecond {
		t.Fatalf("%+v %v", plan, phases(st))
	}
}

// The annotation keeps at most 100 entries and 32 KiB: old sent records
// of conditions that no longer hold go first, then dead letters, then
// sent records that hold; deliveries under way stay.
func TestEncodeBounds(t *testing.T) {
	st := State{}
	add := func(key string, phase Phase, age int) {
		st[key] = &Delivery{Trigger: "t", Condition: "c", Service: "hook", Phase: phase, Attempts: 1, Time: t0.Add(-time.Duration(age) * time.Minute)}
	}
	live := map[string]bool{}
	for i := range 60 {
		add(fmt.Sprintf("old-%02d", i), PhaseSent, 100+i)
		add(fmt.Sprintf("live-%02d", i), PhaseSent, 200+i)
		live[fmt.Sprintf("live-%02d", i)] = true
	}
	add("dead", PhaseDead, 1)
	add("pending", PhasePending, 1000)
	s, err := st.Encode(live)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseState(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != maxEntries {
		t.Fatalf("%d entries, want %d", len(back), maxEntries)
	}
	for _, k := range []string{"pending", "dead", "live-00", "live-59", "old-00"} {
		if back[k] == nil {
			t.Errorf("%s was evicted", k)
		}
	}
	if back["old-59"] != nil {
		t.Errorf("the oldest record that no longer holds was kept")
	}
	// Size: long errors are cut, and the whole stays under the bound.
	big := State{}
	for i := range maxEntries {
		big[fmt.Sprintf("k%03d", i)] = &Delivery{Trigger: strings.Repeat("t", 200), Phase: PhasePending, Attempts: MaxAttempts, Error: strings.Repeat("e", 400), Time: t0}
	}
	for k := range big {
		big.Failed(k, strings.Repeat("e", 1000), t0)
	}
	s, err = big.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) > maxStateBytes {
		t.Fatalf("%d bytes", len(s))
	}
	if long := DeliveryKey(strings.Repeat("x", 300), "c", "", "s", "r"); len(long) > maxKeyBytes {
		t.Errorf("key of %d bytes", len(long))
	}
}
