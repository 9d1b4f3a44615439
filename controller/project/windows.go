package project

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
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
	// next remembers the last start found and for which clock readings it
	// holds, so that evaluating a window again and again (every auto-sync
	// of every app) costs no schedule search until the window opens or
	// closes.
	next atomic.Pointer[nextStart]
}

// nextStart is the earliest start s > clock-duration for every clock
// reading in [from, until).
type nextStart struct {
	from, until, start time.Time
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

// zones holds the time zones loaded so far by name. Locations are
// immutable, and only names that load are kept, so it stays as small as
// the IANA database.
var zones sync.Map

// loadTimeZone loads a window's IANA time zone; "" is UTC.
func loadTimeZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone such as 'Europe/Berlin': %w", name, err)
	}
	zones.Store(name, loc)
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
