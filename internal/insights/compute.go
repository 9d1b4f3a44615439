package insights

import "slices"

// daySeconds is the length of a bucket's day (UTC).
const daySeconds = 24 * 60 * 60

// dayOf is the UTC day number (days since 1970-01-01) of Unix time t.
func dayOf(t int64) int32 {
	d := t / daySeconds
	if t < 0 && t%daySeconds != 0 {
		d--
	}
	return int32(max(min(d, 1<<31-1), -1<<31)) //nolint:gosec // G115: clamped to int32
}

// dayStat is what happened to one app on one day. The samples of the day
// are lead[prev.leadEnd:leadEnd] and so on, prev being the day before it
// in appDays.days: an app's samples are laid out day after day.
type dayStat struct {
	day int32
	// deploys counts the deploys that finished on the day; failed those
	// of them that failed before the next deploy.
	deploys, failed uint16
	// syncs counts the sync operations that ended on the day.
	syncs uint16
	// drift is how long (seconds) the app was OutOfSync during the day.
	drift int32
	// failures counts the failures that started on the day.
	failures uint16
	// End offsets of the day's samples in appDays' slices.
	leadEnd, restoreEnd, durationEnd uint32
}

// appDays is one app's log reduced to per-day buckets.
type appDays struct {
	days []dayStat
	// lead are lead times of changes, restore times to restore,
	// duration sync durations, in seconds, grouped by day.
	lead, restore, duration []int32
	// outOfSyncSince is when the app last went OutOfSync, when it still
	// is at its last record (0 otherwise): the drift of the days after
	// is counted at query time.
	outOfSyncSince int64
}

// builder fills an appDays from records in time order.
type builder struct {
	a *appDays
}

// day returns the bucket of day d, adding it (days come in order).
func (b *builder) day(d int32) *dayStat {
	n := len(b.a.days)
	if n > 0 && b.a.days[n-1].day == d {
		return &b.a.days[n-1]
	}
	if n > 0 && b.a.days[n-1].day > d {
		// Records are sorted by time; an unsorted log counts into the
		// latest day rather than break the order.
		return &b.a.days[n-1]
	}
	b.a.days = append(b.a.days, dayStat{day: d})
	return &b.a.days[n]
}

// close sets the sample offsets of the last day.
func (b *builder) close() {
	n := len(b.a.days)
	if n == 0 {
		return
	}
	d := &b.a.days[n-1]
	// An app's log holds at most MaxRecords records, so few samples.
	d.leadEnd, d.restoreEnd, d.durationEnd = uint32(len(b.a.lead)), uint32(len(b.a.restore)), uint32(len(b.a.duration)) //nolint:gosec // G115: bounded by MaxRecords
}

// at makes day(t) the current day, closing the one before.
func (b *builder) at(t int64) *dayStat {
	d := dayOf(t)
	if n := len(b.a.days); n > 0 && b.a.days[n-1].day != d {
		b.close()
	}
	return b.day(d)
}

// addDrift counts the OutOfSync time [from, to) into its days.
func (b *builder) addDrift(from, to int64) {
	for from < to {
		end := min(to, (int64(dayOf(from))+1)*daySeconds)
		b.at(from).drift += int32(end - from) //nolint:gosec // G115: at most a day's seconds
		from = end
	}
}

func inc(n *uint16) {
	if *n < ^uint16(0) {
		*n++
	}
}

// Tracker follows one app's log record by record and says what each
// record means for the figures. It is where the definitions of
// docs/insights.md live; the index's buckets and the controller's
// metrics both step one, so they cannot disagree:
//
//   - a deploy is a Succeeded sync whose revision differs from the one
//     the app's previous deploy deployed (the first Succeeded sync is
//     one); its lead time is its finish minus its revision's commit time;
//   - a deploy failed when, before the next deploy, a sync ends Failed or
//     Error, or the app's health becomes Degraded;
//   - a failure starts at such a sync's end or health change (while the
//     app is not failing already) and is restored at the first moment
//     the app is Healthy and Synced with its last sync Succeeded;
//   - every sync that ended has a duration, its end minus its start;
//   - drift is the time the app's sync status was OutOfSync.
//
// The zero Tracker starts an app's log.
type Tracker struct {
	deployed, deployFailed, lastSyncFailed bool
	lastRev                                string
	failingSince                           int64
	health, sync                           string
	outOfSyncFrom                          int64
	// Last is the time of the last record stepped.
	Last int64
}

// Outcome is what one record meant.
type Outcome struct {
	// Deploy is set for a deploy; LeadTime is its lead time in seconds,
	// -1 when its commit time is unknown.
	Deploy   bool
	LeadTime int64
	// DeployFailed is set when the record made the current deploy fail.
	DeployFailed bool
	// FailureStarted is set when the record started a failure.
	FailureStarted bool
	// Restored is set when the record ended a failure, RestoreTime
	// seconds after it started.
	Restored    bool
	RestoreTime int64
	// SyncDuration is the seconds a sync record's operation ran, -1 for
	// a state record.
	SyncDuration int64
	// DriftFrom and DriftTo bound the OutOfSync time the record ends
	// (DriftTo > DriftFrom), counted up to each record.
	DriftFrom, DriftTo int64
}

// Health and Sync are the app's status as of the last state record.
func (t *Tracker) Health() string { return t.health }

// Sync is the app's sync status as of the last state record.
func (t *Tracker) Sync() string { return t.sync }

// Step takes the next record (records come in time order).
func (t *Tracker) Step(r Record) Outcome {
	o := Outcome{LeadTime: -1, SyncDuration: -1}
	t.Last = max(t.Last, r.At)
	if t.sync == SyncOutOfSync && t.outOfSyncFrom > 0 && r.At > t.outOfSyncFrom {
		o.DriftFrom, o.DriftTo = t.outOfSyncFrom, r.At
		t.outOfSyncFrom = r.At
	}
	switch r.Kind {
	case KindSync:
		o.SyncDuration = max(r.At-r.Started, 0)
		switch r.Phase {
		case PhaseSucceeded:
			t.lastSyncFailed = false
			if !t.deployed || r.Revision != t.lastRev {
				t.deployed, t.lastRev, t.deployFailed = true, r.Revision, false
				o.Deploy = true
				if r.CommitAt > 0 && r.CommitAt <= r.At {
					o.LeadTime = r.At - r.CommitAt
				}
			}
		case PhaseFailed, PhaseError:
			t.lastSyncFailed = true
			t.fail(r.At, &o)
		}
	case KindState:
		if r.Sync != SyncOutOfSync {
			t.outOfSyncFrom = 0
		} else if t.sync != SyncOutOfSync {
			t.outOfSyncFrom = r.At
		}
		t.health, t.sync = r.Health, r.Sync
		if t.health == HealthDegraded {
			t.fail(r.At, &o)
		}
	}
	if t.failingSince != 0 && !o.FailureStarted && !t.lastSyncFailed && t.health == HealthHealthy && t.sync == SyncSynced {
		o.Restored, o.RestoreTime = true, max(r.At-t.failingSince, 0)
		t.failingSince = 0
	}
	return o
}

func (t *Tracker) fail(at int64, o *Outcome) {
	if t.deployed && !t.deployFailed {
		t.deployFailed, o.DeployFailed = true, true
	}
	if t.failingSince == 0 {
		t.failingSince, o.FailureStarted = at, true
	}
}

// build reduces records (sorted by At) to per-day buckets.
func build(records []Record) *appDays {
	a := &appDays{}
	b := &builder{a: a}
	var t Tracker
	deployDay := -1 // index into a.days of the current deploy's day
	for _, r := range records {
		o := t.Step(r)
		if o.DriftTo > o.DriftFrom {
			b.addDrift(o.DriftFrom, o.DriftTo)
		}
		d := b.at(r.At)
		if o.SyncDuration >= 0 {
			inc(&d.syncs)
			a.duration = append(a.duration, clampInt32(o.SyncDuration))
		}
		if o.Deploy {
			inc(&d.deploys)
			deployDay = len(a.days) - 1
			if o.LeadTime >= 0 {
				a.lead = append(a.lead, clampInt32(o.LeadTime))
			}
		}
		if o.DeployFailed && deployDay >= 0 {
			inc(&a.days[deployDay].failed)
		}
		if o.FailureStarted {
			inc(&d.failures)
		}
		if o.Restored {
			a.restore = append(a.restore, clampInt32(o.RestoreTime))
		}
	}
	b.close()
	if t.sync == SyncOutOfSync {
		a.outOfSyncSince = t.outOfSyncFrom
	}
	return a
}

func clampInt32(v int64) int32 {
	return int32(max(min(v, 1<<31-1), 0))
}

// samples returns the samples of days[i] in s (one of the appDays
// slices, with end giving a day's end offset).
func samples(days []dayStat, i int, s []int32, end func(*dayStat) uint32) []int32 {
	lo := uint32(0)
	if i > 0 {
		lo = end(&days[i-1])
	}
	return s[lo:end(&days[i])]
}

func leadEnd(d *dayStat) uint32     { return d.leadEnd }
func restoreEnd(d *dayStat) uint32  { return d.restoreEnd }
func durationEnd(d *dayStat) uint32 { return d.durationEnd }

// quantile returns the nearest-rank q-quantile of s (the smallest sample
// with at least q of the samples at or below it), reordering s; 0 for
// none.
func quantile(s []int32, q float64) int32 {
	if len(s) == 0 {
		return 0
	}
	k := int(q*float64(len(s))+0.999999999) - 1
	k = max(min(k, len(s)-1), 0)
	return selectK(s, k)
}

// selectK returns the k-th smallest element of s (0-based), partially
// ordering s around it (quickselect; median of three pivots).
func selectK(s []int32, k int) int32 {
	lo, hi := 0, len(s)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		p := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < p {
				i++
			}
			for s[j] > p {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	slices.Sort(s[lo : hi+1])
	return s[k]
}
