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
	return int32(d)
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
	// samples of the current (last) day, appended as they come.
	lead, restore, duration []int32
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
	d.leadEnd, d.restoreEnd, d.durationEnd = uint32(len(b.a.lead)), uint32(len(b.a.restore)), uint32(len(b.a.duration))
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
		b.at(from).drift += int32(end - from)
		from = end
	}
}

func inc(n *uint16) {
	if *n < ^uint16(0) {
		*n++
	}
}

// build reduces records (sorted by At) to per-day buckets. It is where
// the definitions of docs/insights.md live:
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
func build(records []Record) *appDays {
	a := &appDays{}
	b := &builder{a: a}
	var (
		deployed      bool
		lastRev       string
		deployDay     = int32(-1) // index into a.days of the current deploy's day
		deployFailed  bool
		failingSince  int64
		lastSyncOK    = true
		health, sync  string
		outOfSyncFrom int64
	)
	fail := func(t int64) {
		if deployed && !deployFailed && deployDay >= 0 {
			deployFailed = true
			inc(&a.days[deployDay].failed)
		}
		if failingSince == 0 {
			failingSince = t
			inc(&b.at(t).failures)
		}
	}
	restoreIfHealthy := func(t int64) {
		if failingSince != 0 && lastSyncOK && health == HealthHealthy && sync == SyncSynced {
			b.at(t)
			a.restore = append(a.restore, clampInt32(t-failingSince))
			failingSince = 0
		}
	}
	for _, r := range records {
		// Drift is counted up to each record, so days are filled in order.
		if sync == SyncOutOfSync && outOfSyncFrom > 0 && r.At > outOfSyncFrom {
			b.addDrift(outOfSyncFrom, r.At)
			outOfSyncFrom = r.At
		}
		switch r.Kind {
		case KindSync:
			d := b.at(r.At)
			inc(&d.syncs)
			a.duration = append(a.duration, clampInt32(r.At-r.Started))
			switch r.Phase {
			case PhaseSucceeded:
				lastSyncOK = true
				if !deployed || r.Revision != lastRev {
					deployed, lastRev, deployFailed = true, r.Revision, false
					inc(&d.deploys)
					deployDay = int32(len(a.days) - 1)
					if r.CommitAt > 0 && r.CommitAt <= r.At {
						a.lead = append(a.lead, clampInt32(r.At-r.CommitAt))
					}
				}
				restoreIfHealthy(r.At)
			case PhaseFailed, PhaseError:
				lastSyncOK = false
				fail(r.At)
			}
		case KindState:
			if r.Sync != SyncOutOfSync {
				outOfSyncFrom = 0
			} else if sync != SyncOutOfSync {
				outOfSyncFrom = r.At
			}
			health, sync = r.Health, r.Sync
			if health == HealthDegraded {
				fail(r.At)
			}
			restoreIfHealthy(r.At)
		}
	}
	b.close()
	a.outOfSyncSince = outOfSyncFrom
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
