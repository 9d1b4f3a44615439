package insights

import (
	"fmt"
	"sync"
	"time"
)

// App names an application whose log the index holds.
type App struct {
	Namespace, Name string
	// Project is the app's project at its last record.
	Project string
}

// Key identifies an app: its namespace and name.
type Key struct{ Namespace, Name string }

// Index holds every app's log reduced to per-day buckets, so that a
// query adds buckets rather than reading logs. It is safe for concurrent
// use; Set replaces an app's buckets in one step.
type Index struct {
	mu   sync.RWMutex
	apps map[Key]*indexed
}

type indexed struct {
	app  App
	days *appDays
}

// NewIndex returns an empty index.
func NewIndex() *Index { return &Index{apps: map[Key]*indexed{}} }

// Set replaces the log of app with records (sorted by time, as Trim
// leaves them).
func (x *Index) Set(app App, records []Record) {
	d := build(records)
	x.mu.Lock()
	x.apps[Key{app.Namespace, app.Name}] = &indexed{app: app, days: d}
	x.mu.Unlock()
}

// Delete forgets the log of the app key.
func (x *Index) Delete(key Key) {
	x.mu.Lock()
	delete(x.apps, key)
	x.mu.Unlock()
}

// Len is how many apps the index holds.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.apps)
}

// Bucket is the width of a Result's series points.
type Bucket int

// Bucket widths.
const (
	Day  Bucket = 1
	Week Bucket = 7
)

// MaxRangeDays bounds a query's range: the retention, plus the partial
// days at its ends.
const MaxRangeDays = int(Retention/(24*time.Hour)) + 2

// Query asks for the figures of the apps Match accepts over [From, To),
// both rounded down to UTC days (a To within a day includes that day).
type Query struct {
	From, To time.Time
	Bucket   Bucket
	// Match selects the apps (scope and what the caller may see); nil
	// takes every app.
	Match func(App) bool
	// Now bounds the drift of apps still OutOfSync; zero means
	// time.Now().
	Now time.Time
}

// Figures are the delivery figures of a set of apps over a time range.
// Durations are in seconds; a quantile of no samples is 0.
type Figures struct {
	// Start is the first instant the figures cover; Days how many days.
	Start time.Time
	Days  int
	// Deploys counts deploys, DeploysPerDay is Deploys / Days.
	Deploys       int
	DeploysPerDay float64
	// FailedDeploys counts the deploys that failed before the next one;
	// ChangeFailureRate is FailedDeploys / Deploys (0 without deploys).
	FailedDeploys     int
	ChangeFailureRate float64
	// LeadTimes counts the deploys whose commit time is known.
	LeadTimes                           int
	LeadTimeMedian, LeadTimeP90         int64
	Failures                            int
	Restores                            int
	TimeToRestoreMedian                 int64
	Syncs                               int
	SyncDurationMedian, SyncDurationP90 int64
	// Drift is the OutOfSync time of the apps added up (seconds).
	Drift int64
}

// Result answers a Query: the figures of the whole range, and a series
// of one Figures per bucket for charts.
type Result struct {
	// Apps counts the apps the query matched.
	Apps   int
	Total  Figures
	Series []Figures
}

// acc accumulates one bucket. Its samples are windows of slices shared
// by every bucket of a query, laid out bucket after bucket, so that the
// total's quantiles read them all without a copy.
type acc struct {
	deploys, failed, syncs, failures int
	drift                            int64
	lead, restore, duration          []int32
}

func (a *acc) figures(start time.Time, days int) Figures {
	f := Figures{
		Start: start, Days: days, Deploys: a.deploys, FailedDeploys: a.failed,
		LeadTimes: len(a.lead), Failures: a.failures, Restores: len(a.restore),
		Syncs: a.syncs, Drift: a.drift,
	}
	if days > 0 {
		f.DeploysPerDay = float64(a.deploys) / float64(days)
	}
	if a.deploys > 0 {
		f.ChangeFailureRate = float64(a.failed) / float64(a.deploys)
	}
	f.LeadTimeMedian, f.LeadTimeP90 = int64(quantile(a.lead, 0.5)), int64(quantile(a.lead, 0.9))
	f.TimeToRestoreMedian = int64(quantile(a.restore, 0.5))
	f.SyncDurationMedian, f.SyncDurationP90 = int64(quantile(a.duration, 0.5)), int64(quantile(a.duration, 0.9))
	return f
}

// counts are the samples of one bucket, counted before they are copied.
type counts struct{ lead, restore, duration int }

// Run answers q. It reads the matching apps' buckets twice: once to
// count the samples of each bucket, once to copy them into one slice per
// kind of sample, so a query allocates three slices however many apps
// and days it covers.
func (x *Index) Run(q Query) (*Result, error) {
	if q.Bucket != Day && q.Bucket != Week {
		return nil, fmt.Errorf("bucket of %d days: want 1 or 7", q.Bucket)
	}
	from, to := dayOf(q.From.Unix()), dayOf(q.To.Unix())
	if q.To.Unix()%daySeconds != 0 {
		to++
	}
	if to <= from {
		return nil, fmt.Errorf("range %s to %s: the end must be after the start", q.From.UTC().Format(time.RFC3339), q.To.UTC().Format(time.RFC3339))
	}
	if int(to-from) > MaxRangeDays {
		return nil, fmt.Errorf("range of %d days: at most %d are kept", to-from, MaxRangeDays)
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	width := int32(q.Bucket) //nolint:gosec // G115: 1 or 7, checked above
	n := int((to - from + width - 1) / width)
	buckets := make([]acc, n)
	sizes := make([]counts, n)
	res := &Result{}

	x.mu.RLock()
	matched := make([]*appDays, 0, len(x.apps))
	for _, e := range x.apps {
		if q.Match != nil && !q.Match(e.app) {
			continue
		}
		matched = append(matched, e.days)
		days := e.days.days
		for i := searchDay(days, from); i < len(days) && days[i].day < to; i++ {
			d := &days[i]
			b, c := &buckets[(d.day-from)/width], &sizes[(d.day-from)/width]
			b.deploys += int(d.deploys)
			b.failed += int(d.failed)
			b.syncs += int(d.syncs)
			b.failures += int(d.failures)
			b.drift += int64(d.drift)
			c.lead += len(samples(days, i, e.days.lead, leadEnd))
			c.restore += len(samples(days, i, e.days.restore, restoreEnd))
			c.duration += len(samples(days, i, e.days.duration, durationEnd))
		}
		if since := e.days.outOfSyncSince; since > 0 {
			addOpenDrift(buckets, since, now.Unix(), from, to, width)
		}
	}
	res.Apps = len(matched)
	var all counts
	for _, c := range sizes {
		all.lead, all.restore, all.duration = all.lead+c.lead, all.restore+c.restore, all.duration+c.duration
	}
	lead, restore, duration := make([]int32, 0, all.lead), make([]int32, 0, all.restore), make([]int32, 0, all.duration)
	// Each bucket's window starts empty at its place and grows within it.
	for i, c := range sizes {
		b := &buckets[i]
		b.lead, lead = lead[len(lead):], lead[:len(lead)+c.lead]
		b.restore, restore = restore[len(restore):], restore[:len(restore)+c.restore]
		b.duration, duration = duration[len(duration):], duration[:len(duration)+c.duration]
	}
	for _, a := range matched {
		days := a.days
		for i := searchDay(days, from); i < len(days) && days[i].day < to; i++ {
			b := &buckets[(days[i].day-from)/width]
			b.lead = append(b.lead, samples(days, i, a.lead, leadEnd)...)
			b.restore = append(b.restore, samples(days, i, a.restore, restoreEnd)...)
			b.duration = append(b.duration, samples(days, i, a.duration, durationEnd)...)
		}
	}
	x.mu.RUnlock()

	total := acc{lead: lead, restore: restore, duration: duration}
	res.Series = make([]Figures, n)
	for i := range buckets {
		b := &buckets[i]
		start := int64(from+int32(i)*width) * daySeconds
		days := int(min(width, to-from-int32(i)*width))
		// Quantiles reorder a bucket's samples within its window, which
		// the total's quantiles do not mind.
		res.Series[i] = b.figures(time.Unix(start, 0).UTC(), days)
		total.deploys += b.deploys
		total.failed += b.failed
		total.syncs += b.syncs
		total.failures += b.failures
		total.drift += b.drift
	}
	res.Total = total.figures(time.Unix(int64(from)*daySeconds, 0).UTC(), int(to-from))
	return res, nil
}

// searchDay is the index of the first day of days at or after d.
func searchDay(days []dayStat, d int32) int {
	lo, hi := 0, len(days)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if days[m].day < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// addOpenDrift counts an OutOfSync time still open, [since, now), into
// the buckets of days [from, to).
func addOpenDrift(buckets []acc, since, now int64, from, to, width int32) {
	lo, hi := max(since, int64(from)*daySeconds), min(now, int64(to)*daySeconds)
	for lo < hi {
		d := dayOf(lo)
		end := min(hi, (int64(d)+1)*daySeconds)
		buckets[(d-from)/width].drift += end - lo
		lo = end
	}
}
