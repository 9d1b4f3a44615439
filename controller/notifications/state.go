package notifications

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
)

// StateAnnotation is the Application annotation that records what was
// notified for it: a JSON object of Deliveries by key (see DeliveryKey).
const StateAnnotation = "notified." + AnnotationPrefix

// Phase is where one delivery stands.
type Phase string

// The phases of a delivery: claimed and being sent, sent, failed and
// waiting for its next attempt, or given up (the dead letter).
const (
	PhasePending Phase = "pending"
	PhaseSent    Phase = "sent"
	PhaseFailed  Phase = "failed"
	PhaseDead    Phase = "dead"
)

// Bounds on the state annotation and on retries.
const (
	// MaxAttempts is how many sends a delivery gets before it is dead.
	MaxAttempts = 5
	// maxEntries and maxStateBytes bound the annotation (the API server
	// allows 256 KiB for all annotations of an object together).
	maxEntries    = 100
	maxStateBytes = 32 << 10
	maxErrorBytes = 256
	maxKeyBytes   = 120
	firstBackoff  = 5 * time.Second
	maxBackoff    = 5 * time.Minute
)

// Delivery is the record of one notification: one trigger condition
// (for one oncePer value) to one destination.
type Delivery struct {
	Trigger   string `json:"trigger"`
	Condition string `json:"condition"`
	// Once says the condition has oncePer: its record stays when the
	// condition stops holding, so it notifies once per value.
	Once      bool   `json:"once,omitempty"`
	Service   string `json:"service"`
	Recipient string `json:"recipient,omitempty"`
	Phase     Phase  `json:"phase"`
	// Attempts counts the sends started.
	Attempts int `json:"attempts"`
	// Time is when the phase was last set.
	Time time.Time `json:"time"`
	// Error is the last send's error, with the Secret's values masked.
	Error string `json:"error,omitempty"`
	// Cleared marks a dead letter whose condition stopped holding: when
	// it holds again, it notifies again.
	Cleared bool `json:"cleared,omitempty"`
}

// State is an app's deliveries by key.
type State map[string]*Delivery

// ParseState reads the state annotation; an unreadable one reads as
// empty (and is replaced on the next write) with the error.
func ParseState(s string) (State, error) {
	st := State{}
	if s == "" {
		return st, nil
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return State{}, fmt.Errorf("annotation %s: %w", StateAnnotation, err)
	}
	for k, d := range st {
		if d == nil {
			delete(st, k)
		}
	}
	return st, nil
}

// DeliveryKey names one delivery:
// <trigger>/<condition key>/<oncePer>/<service>/<recipient>, or the
// trigger and a hash of that when it is long.
func DeliveryKey(trigger, condition, oncePer, service, recipient string) string {
	k := strings.Join([]string{trigger, condition, oncePer, service, recipient}, "/")
	if len(k) <= maxKeyBytes {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return truncate(trigger, 64) + "/" + base64.RawURLEncoding.EncodeToString(sum[:18])
}

// Occurrence is one subscribed trigger condition for one destination,
// as it stands for an app now.
type Occurrence struct {
	// Key is the DeliveryKey of the condition with its current oncePer
	// value; it is set only when the condition holds.
	Key       string
	Trigger   string
	Condition string
	Once      bool
	Holds     bool
	// Templates are the condition's send list.
	Templates   []string
	Destination services.Destination
}

// match is the identity of an occurrence's deliveries across oncePer
// values.
func (o Occurrence) match() string {
	return o.Trigger + "\x00" + o.Condition + "\x00" + o.Destination.Service + "\x00" + o.Destination.Recipient
}

func (d *Delivery) match() string {
	return d.Trigger + "\x00" + d.Condition + "\x00" + d.Service + "\x00" + d.Recipient
}

// Occurrences evaluates each subscription's trigger on app (the
// Application as a JSON object): one Occurrence per condition and
// destination. Subscriptions to a trigger the configuration lacks are
// returned as missing.
func (c *Config) Occurrences(app map[string]any, subs []Subscription) (out []Occurrence, missing []string) {
	results := map[string][]Result{}
	for _, s := range subs {
		t := c.Trigger(s.Trigger)
		if t == nil {
			missing = append(missing, s.Trigger)
			continue
		}
		rs, ok := results[s.Trigger]
		if !ok {
			rs = t.Run(app)
			results[s.Trigger] = rs
		}
		for i, r := range rs {
			o := Occurrence{
				Trigger: s.Trigger, Condition: r.Key, Once: t.conditions[i].oncePer != nil, Holds: r.Triggered,
				Templates: r.Templates, Destination: s.Destination,
			}
			if o.Holds {
				o.Key = DeliveryKey(s.Trigger, r.Key, r.OncePer, s.Destination.Service, s.Destination.Recipient)
			}
			out = append(out, o)
		}
	}
	return out, slices.Compact(missing)
}

// Plan is what one evaluation decides.
type Plan struct {
	// Claims are the keys to send now, each already pending in the state.
	Claims []string
	// Changed says the state differs from what was read.
	Changed bool
	// Wait is how long until a retry or a stale claim is due; 0 for none.
	Wait time.Duration
	// Occurrences by key of Claims, for rendering and sending.
	Due map[string]Occurrence
}

// Planner decides from an app's state and occurrences what to send.
type Planner struct {
	// Now is the time of the evaluation.
	Now time.Time
	// StaleAfter is how old a pending claim must be to count as
	// abandoned (a process stopped between claim and outcome) and be
	// sent again: longer than a send may take.
	StaleAfter time.Duration
	// Allow says whether a send to service may start now (the rate
	// limit); when not, how long to wait. Nil allows all.
	Allow func(service string) (bool, time.Duration)
}

// Plan updates st for occs and returns the keys to send. New
// occurrences that hold are claimed (pending); a condition without
// oncePer that no longer holds drops its sent record (and clears its
// dead letter) so that it notifies when it holds again; failed
// deliveries whose backoff has passed and abandoned pending ones are
// claimed again while their subscription stands, and dropped when it is
// gone.
func (p Planner) Plan(st State, occs []Occurrence) Plan {
	plan := Plan{Due: map[string]Occurrence{}}
	byMatch := map[string]Occurrence{}
	for _, o := range occs {
		byMatch[o.match()] = o
	}
	wait := func(d time.Duration) {
		if d > 0 && (plan.Wait == 0 || d < plan.Wait) {
			plan.Wait = d
		}
	}
	claim := func(key string, d *Delivery, o Occurrence, again bool) {
		if p.Allow != nil {
			if ok, after := p.Allow(o.Destination.Service); !ok {
				wait(max(after, 10*time.Millisecond))
				return
			}
		}
		d.Phase, d.Time, d.Cleared = PhasePending, p.Now, false
		if !again {
			d.Attempts++
		}
		st[key] = d
		plan.Claims = append(plan.Claims, key)
		plan.Due[key] = o
		plan.Changed = true
	}
	// Deliveries under way first: failed ones due for a retry, pending
	// ones abandoned.
	for _, key := range slices.Sorted(maps.Keys(st)) {
		d := st[key]
		o, subscribed := byMatch[d.match()]
		switch d.Phase {
		case PhaseFailed:
			if !subscribed {
				delete(st, key)
				plan.Changed = true
				continue
			}
			if due := d.Time.Add(Backoff(d.Attempts)); due.After(p.Now) {
				wait(due.Sub(p.Now))
				continue
			}
			claim(key, d, o, false)
		case PhasePending:
			if due := d.Time.Add(p.StaleAfter); due.After(p.Now) {
				wait(due.Sub(p.Now))
				continue
			}
			if !subscribed {
				delete(st, key)
				plan.Changed = true
				continue
			}
			// An abandoned claim is sent again as the same attempt;
			// the new time makes the claim a write of its own.
			claim(key, d, o, true)
		}
	}
	inFlight := 0
	for _, d := range st {
		if d.Phase == PhasePending || d.Phase == PhaseFailed {
			inFlight++
		}
	}
	for _, o := range occs {
		if !o.Holds {
			if o.Once {
				continue
			}
			key := DeliveryKey(o.Trigger, o.Condition, "", o.Destination.Service, o.Destination.Recipient)
			switch d := st[key]; {
			case d == nil:
			case d.Phase == PhaseSent:
				delete(st, key)
				plan.Changed = true
			case d.Phase == PhaseDead && !d.Cleared:
				d.Cleared = true
				plan.Changed = true
			}
			continue
		}
		d := st[o.Key]
		if d != nil && (d.Phase != PhaseDead || !d.Cleared) {
			continue // notified, or under way
		}
		if inFlight >= maxEntries/2 {
			wait(firstBackoff)
			continue
		}
		claim(o.Key, &Delivery{
			Trigger: o.Trigger, Condition: o.Condition, Once: o.Once,
			Service: o.Destination.Service, Recipient: o.Destination.Recipient,
		}, o, false)
		inFlight++
	}
	return plan
}

// Backoff is the wait after the attempts-th failed send: 5 s, doubling,
// at most 5 min.
func Backoff(attempts int) time.Duration {
	d := firstBackoff
	for i := 1; i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// Sent records that the claim of key was delivered.
func (st State) Sent(key string, now time.Time) {
	if d := st[key]; d != nil {
		d.Phase, d.Time, d.Error = PhaseSent, now, ""
	}
}

// Failed records that the claim of key failed with errText (already
// masked): failed, to be tried again after Backoff, or dead after
// MaxAttempts. It reports whether the delivery is dead.
func (st State) Failed(key, errText string, now time.Time) bool {
	d := st[key]
	if d == nil {
		return false
	}
	d.Phase, d.Time, d.Error = PhaseFailed, now, truncate(errText, maxErrorBytes)
	if d.Attempts >= MaxAttempts {
		d.Phase = PhaseDead
	}
	return d.Phase == PhaseDead
}

// Encode writes the state for the annotation, within its bounds: at
// most 100 entries and 32 KiB. What goes first: sent records of
// conditions that no longer hold, oldest first; then dead letters; then
// sent records of conditions that hold (live: such a record dropped may
// notify again). Deliveries under way stay.
func (st State) Encode(live map[string]bool) (string, error) {
	st.evict(live, func() bool { return len(st) <= maxEntries })
	for {
		b, err := json.Marshal(st)
		if err != nil {
			return "", err
		}
		if len(b) <= maxStateBytes || !st.evictOne(live) {
			return string(b), nil
		}
	}
}

// evict drops entries, in Encode's order, until done says enough.
func (st State) evict(live map[string]bool, done func() bool) {
	for !done() && st.evictOne(live) {
	}
}

// evictOne drops the first entry in Encode's order; false when only
// deliveries under way are left.
func (st State) evictOne(live map[string]bool) bool {
	rank := func(k string) int {
		d := st[k]
		switch {
		case d.Phase == PhaseSent && !live[k]:
			return 0
		case d.Phase == PhaseDead:
			return 1
		case d.Phase == PhaseSent:
			return 2
		default:
			return 3
		}
	}
	best := ""
	for k := range st {
		if rank(k) == 3 {
			continue
		}
		if best == "" || cmp.Or(cmp.Compare(rank(k), rank(best)), st[k].Time.Compare(st[best].Time), cmp.Compare(k, best)) < 0 {
			best = k
		}
	}
	if best == "" {
		return false
	}
	delete(st, best)
	return true
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
