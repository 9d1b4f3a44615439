package project

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	// Sync windows name IANA time zones; the embedded database makes them
	// work in images without /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Window kinds.
const (
	WindowAllow = "allow"
	WindowDeny  = "deny"
)

// cronParser reads schedules as Argo CD does: five fields (minute, hour,
// day of month, month, day of week) or a descriptor such as @daily.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// WindowTarget is the application a project's sync windows are evaluated
// for.
type WindowTarget struct {
	// AppName is the Application's name, matched by a window's
	// applications globs.
	AppName string
	// AppNamespace is the Application's namespace. A window's applications
	// glob containing "/" matches "<AppNamespace>/<AppName>".
	AppNamespace string
	// Server and ClusterName are the destination's server URL and cluster
	// name; a window's clusters globs match either.
	Server      string
	ClusterName string
	// Namespace is the destination namespace, matched by a window's
	// namespaces globs.
	Namespace string
}

// window is one compiled spec.syncWindows entry.
type window struct {
	index      int
	spec       v1alpha1.SyncWindow
	deny       bool
	schedule   cron.Schedule
	duration   time.Duration
	loc        *time.Location
	apps       []appGlob
	clusters   []*glob
	namespaces []*glob
}

// appGlob is an applications glob; qualified ones contain "/" and match
// "<namespace>/<name>".
type appGlob struct {
	g         *glob
	qualified bool
}

func compileWindows(specs []v1alpha1.SyncWindow, probs *problems) []*window {
	out := make([]*window, 0, len(specs))
	for i := range specs {
		if w := compileWindow(i, specs[i], probs); w != nil {
			out = append(out, w)
		}
	}
	return out
}

func compileWindow(i int, s v1alpha1.SyncWindow, probs *problems) *window {
	field := fmt.Sprintf("spec.syncWindows[%d]", i)
	before := len(probs.list)
	w := &window{index: i, spec: s, deny: s.Kind == WindowDeny}
	if s.Kind != WindowAllow && s.Kind != WindowDeny {
		probs.addf(field+".kind", "%q is not a window kind; use %q or %q", s.Kind, WindowAllow, WindowDeny)
	}
	var err error
	if w.schedule, err = parseSchedule(s.Schedule); err != nil {
		probs.addf(field+".schedule", "%v", err)
	}
	if w.duration, err = parseWindowDuration(s.Duration); err != nil {
		probs.addf(field+".duration", "%v", err)
	}
	if w.loc, err = loadTimeZone(s.TimeZone); err != nil {
		probs.addf(field+".timeZone", "%v", err)
	}
	if len(s.Applications) == 0 && len(s.Namespaces) == 0 && len(s.Clusters) == 0 {
		probs.addf(field, "a window needs at least one of applications, namespaces or clusters (use '*' for all)")
	}
	for j, p := range s.Applications {
		g, err := compileGlob(p, noSeparator)
		if err != nil {
			probs.addf(fmt.Sprintf("%s.applications[%d]", field, j), "pattern %q: %v", p, err)
			continue
		}
		w.apps = append(w.apps, appGlob{g: g, qualified: strings.Contains(p, "/")})
	}
	w.clusters = compileGlobs(field+".clusters", s.Clusters, probs)
	w.namespaces = compileGlobs(field+".namespaces", s.Namespaces, probs)
	if len(probs.list) > before {
		return nil
	}
	return w
}

func compileGlobs(field string, patterns []string, probs *problems) []*glob {
	out := make([]*glob, 0, len(patterns))
	for j, p := range patterns {
		g, err := compileGlob(p, noSeparator)
		if err != nil {
			probs.addf(fmt.Sprintf("%s[%d]", field, j), "pattern %q: %v", p, err)
			continue
		}
		out = append(out, g)
	}
	return out
}

// scheduleCheckFrom is the fixed moment from which Validate checks that a
// schedule fires at all, so validation does not depend on the clock.
var scheduleCheckFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// parseSchedule parses a window's cron schedule. It refuses @every, whose
// start depends on when it is asked, time zone prefixes (the window's
// timeZone field says that), and schedules that never fire.
func parseSchedule(spec string) (sched cron.Schedule, err error) {
	trimmed := strings.TrimSpace(spec)
	switch {
	case trimmed == "":
		return nil, errors.New("schedule is required, such as '0 22 * * *'")
	case strings.HasPrefix(trimmed, "@every"):
		return nil, fmt.Errorf("%q: @every has no fixed start time; use a cron schedule such as '0 * * * *'", spec)
	case strings.HasPrefix(trimmed, "TZ=") || strings.HasPrefix(trimmed, "CRON_TZ="):
		return nil, fmt.Errorf("%q: set the time zone in the window's timeZone field, not in the schedule", spec)
	}
	defer func() {
		// The parser is third-party code fed with user input: a panic in it
		// is a bad schedule, not a crash.
		if p := recover(); p != nil {
			sched, err = nil, fmt.Errorf("%q: not a cron schedule", spec)
		}
	}()
	sched, err = cronParser.Parse(trimmed)
	if err != nil {
		return nil, fmt.Errorf("%q is not a cron schedule (minute hour day-of-month month day-of-week): %w", spec, err)
	}
	if sched.Next(scheduleCheckFrom).IsZero() {
		return nil, fmt.Errorf("%q never fires", spec)
	}
	return sched, nil
}

// parseWindowDuration parses a window's duration, a Go duration such as
// "1h" or "90m" that must be positive.
func parseWindowDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, errors.New("duration is required, such as '1h' or '30m'")
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as '1h' or '30m': %w", s, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: duration must be positive", s)
	}
	return d, nil
}

// loadTimeZone loads a window's IANA time zone; "" is UTC.
func loadTimeZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone such as 'Europe/Berlin': %w", name, err)
	}
	return loc, nil
}

// selects reports whether the window applies to t: with the default OR
// any of its non-empty selector lists matches, with andOperator all do.
func (w *window) selects(t WindowTarget) bool {
	checks := [3]struct {
		set, hit bool
	}{
		{len(w.apps) > 0, w.matchesApp(t)},
		{len(w.clusters) > 0, w.matchesCluster(t)},
		{len(w.namespaces) > 0, anyMatch(w.namespaces, t.Namespace)},
	}
	if w.spec.UseAndOperator {
		for _, c := range checks {
			if c.set && !c.hit {
				return false
			}
		}
		return true
	}
	for _, c := range checks {
		if c.set && c.hit {
			return true
		}
	}
	return false
}

func (w *window) matchesApp(t WindowTarget) bool {
	for _, a := range w.apps {
		name := t.AppName
		if a.qualified {
			name = t.AppNamespace + "/" + t.AppName
		}
		if a.g.match(name) {
			return true
		}
	}
	return false
}

func (w *window) matchesCluster(t WindowTarget) bool {
	for _, g := range w.clusters {
		if (t.Server != "" && g.match(t.Server)) || (t.ClusterName != "" && g.match(t.ClusterName)) {
			return true
		}
	}
	return false
}

func anyMatch(globs []*glob, s string) bool {
	for _, g := range globs {
		if g.match(s) {
			return true
		}
	}
	return false
}

// occurrence returns the occurrence of the window that is open at at, or
// else the next one (zero if it does not open within five years), as start
// and end instants.
//
// Windows follow the wall clock of their time zone: a scheduled start s
// opens the window while the local clock reads s <= clock < s+duration.
// On the night clocks change this keeps "22:00 for 1h" meaning 22:00 to
// 23:00 on the clock, never skips a start that falls in the hour clocks
// jump over (the window is open for what is left of it once the clock
// passes the start), and keeps a window open through both passes of the
// hour that repeats.
func (w *window) occurrence(at time.Time) (start, end time.Time, open bool) {
	clock := wallClock(at.In(w.loc))
	// Next returns the first start strictly after its argument: the
	// earliest start s with s > clock-duration, which is open iff
	// s <= clock.
	s := w.schedule.Next(clock.Add(-w.duration))
	open = !s.IsZero() && !s.After(clock)
	if !open {
		s = w.schedule.Next(clock)
	}
	if s.IsZero() {
		return time.Time{}, time.Time{}, false
	}
	if open {
		start = instantReading(s, w.loc, at, true)
		end = instantReading(s.Add(w.duration), w.loc, at, false)
	} else {
		start = instantReading(s, w.loc, at, false)
		end = instantReading(s.Add(w.duration), w.loc, start, false)
	}
	return start, end, open
}

// wallClock returns the reading of t's clock as a UTC time, a timeline
// without DST gaps or repeats on which schedules and durations are
// measured.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// instantReading returns an instant at which loc's clock reads c (a
// wallClock value). In an hour that repeats there are two: it returns the
// latest at or before ref when notAfter is set, else the earliest at or
// after ref. In an hour that is skipped there is none: it returns the
// moment the clock jumps past c.
func instantReading(c time.Time, loc *time.Location, ref time.Time, notAfter bool) time.Time {
	guess := time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), loc)
	var found []time.Time
	lo, hi := guess, guess
	// Offsets in force around c: a transition is never closer than 12 h to
	// another in real zones.
	for _, probe := range []time.Time{guess.Add(-12 * time.Hour), guess, guess.Add(12 * time.Hour)} {
		_, offset := probe.In(loc).Zone()
		inst := c.Add(-time.Duration(offset) * time.Second)
		if inst.Before(lo) {
			lo = inst
		}
		if inst.After(hi) {
			hi = inst
		}
		if wallClock(inst.In(loc)).Equal(c) && !slices.ContainsFunc(found, inst.Equal) {
			found = append(found, inst)
		}
	}
	if len(found) == 0 {
		return clockJump(c, loc, lo, hi)
	}
	slices.SortFunc(found, time.Time.Compare)
	if notAfter {
		for i := len(found) - 1; i >= 0; i-- {
			if !found[i].After(ref) {
				return found[i].In(loc)
			}
		}
		return found[0].In(loc)
	}
	for _, f := range found {
		if !f.Before(ref) {
			return f.In(loc)
		}
	}
	return found[len(found)-1].In(loc)
}

// clockJump finds, between lo (whose clock reads before c) and hi (after
// c), the first second at which loc's clock reads c or later: the end of
// the DST gap c falls in.
func clockJump(c time.Time, loc *time.Location, lo, hi time.Time) time.Time {
	if !wallClock(lo.In(loc)).Before(c) || wallClock(hi.In(loc)).Before(c) {
		return time.Date(c.Year(), c.Month(), c.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), loc)
	}
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		if wallClock(mid.In(loc)).Before(c) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi.Truncate(time.Second).In(loc)
}

// WindowStatus is one sync window that applies to an application, as of
// the moment it was evaluated.
type WindowStatus struct {
	// ID is the window's index in spec.syncWindows, which Argo CD's CLI
	// shows as the window ID.
	ID int
	// Window is the window as written.
	Window v1alpha1.SyncWindow
	// Active reports whether the window is open.
	Active bool
	// Start and End bound the open occurrence when Active, else the next
	// one, in the window's time zone; both are zero when the window does
	// not open within five years. When occurrences overlap, a later one may
	// keep the window open past End.
	Start, End time.Time
}

// WindowState is what a project's sync windows say about an application at
// one moment.
type WindowState struct {
	// Windows are the windows that apply to the application (Argo CD's
	// "assigned windows"), in spec order.
	Windows []WindowStatus
	// At is the moment evaluated.
	At time.Time
	// Project names the project, for messages.
	Project string
}

// SyncWindows evaluates the project's sync windows for target at the given
// moment.
func (r *Rules) SyncWindows(target WindowTarget, at time.Time) WindowState {
	st := WindowState{At: at, Project: r.name}
	for _, w := range r.windows {
		if !w.selects(target) {
			continue
		}
		start, end, open := w.occurrence(at)
		st.Windows = append(st.Windows, WindowStatus{ID: w.index, Window: w.spec, Active: open, Start: start, End: end})
	}
	return st
}

// SyncAllowed evaluates the windows for target at the given moment and
// returns nil when a sync (manual or automated) may start, or a
// *DeniedError naming the window that blocks it.
func (r *Rules) SyncAllowed(target WindowTarget, at time.Time, manual bool) error {
	if len(r.windows) == 0 {
		return nil
	}
	st := r.SyncWindows(target, at)
	return st.Allowed(manual)
}

// Allowed applies Argo CD's rules to the evaluated windows:
//
//   - no window applies: syncs are allowed;
//   - an active deny window blocks syncs, even when an allow window is
//     active too; a manual sync passes only if every active deny window has
//     manualSync;
//   - otherwise an active allow window allows syncs;
//   - otherwise, if allow windows apply (all closed), syncs are blocked; a
//     manual sync passes if one of them has manualSync.
func (s *WindowState) Allowed(manual bool) error {
	var firstDeny, blockingDeny *WindowStatus
	allowActive := false
	var allows []*WindowStatus
	for i := range s.Windows {
		w := &s.Windows[i]
		switch {
		case w.Window.Kind == WindowDeny && w.Active:
			if firstDeny == nil {
				firstDeny = w
			}
			if blockingDeny == nil && !w.Window.ManualSync {
				blockingDeny = w
			}
		case w.Window.Kind == WindowAllow && w.Active:
			allowActive = true
		case w.Window.Kind == WindowAllow:
			allows = append(allows, w)
		}
	}
	if firstDeny != nil {
		switch {
		case manual && blockingDeny == nil:
			return nil
		case manual:
			return denied(s.Project, "manual sync blocked by %s, active from %s until %s; manual sync is not enabled for it",
				describeWindow(blockingDeny), stamp(blockingDeny.Start), stamp(blockingDeny.End))
		case blockingDeny == nil:
			return denied(s.Project, "automated sync blocked by %s, active from %s until %s; manual syncs are allowed",
				describeWindow(firstDeny), stamp(firstDeny.Start), stamp(firstDeny.End))
		default:
			return denied(s.Project, "sync blocked by %s, active from %s until %s",
				describeWindow(blockingDeny), stamp(blockingDeny.Start), stamp(blockingDeny.End))
		}
	}
	if allowActive || len(allows) == 0 {
		return nil
	}
	manualOK := false
	next := allows[0]
	for _, w := range allows {
		manualOK = manualOK || w.Window.ManualSync
		if !w.Start.IsZero() && (next.Start.IsZero() || w.Start.Before(next.Start)) {
			next = w
		}
	}
	if manual && manualOK {
		return nil
	}
	opens := "does not open within five years"
	if !next.Start.IsZero() {
		opens = "opens next at " + stamp(next.Start)
	}
	prefix := "sync"
	suffix := ""
	switch {
	case manual:
		prefix = "manual sync"
	case manualOK:
		prefix = "automated sync"
		suffix = "; manual syncs are allowed"
	}
	return denied(s.Project, "%s blocked outside allow windows: %s %s%s", prefix, describeWindow(next), opens, suffix)
}

// describeWindow names a window in messages, such as
// deny window 2 (schedule '0 22 * * *', duration 1h, time zone UTC: "change freeze").
func describeWindow(w *WindowStatus) string {
	tz := w.Window.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	desc := ""
	if w.Window.Description != "" {
		desc = fmt.Sprintf(": %q", w.Window.Description)
	}
	return fmt.Sprintf("%s window %d (schedule '%s', duration %s, time zone %s%s)",
		w.Window.Kind, w.ID, w.Window.Schedule, w.Window.Duration, tz, desc)
}

// stamp formats a window boundary in the window's own time zone.
func stamp(t time.Time) string { return t.Format(time.RFC3339) }
