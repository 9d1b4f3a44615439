package project

import (
	"fmt"
	"time"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

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
	st := WindowState{At: at, Project: r.name, Windows: make([]WindowStatus, 0, len(r.windows))}
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
// *DeniedError naming the window that blocks it. It builds no
// WindowState unless the sync is refused.
func (r *Rules) SyncAllowed(target WindowTarget, at time.Time, manual bool) error {
	var sum windowSummary
	for _, w := range r.windows {
		if w.selects(target) {
			clock := wallClock(at.In(w.loc))
			s := w.startAfter(clock)
			sum.add(w.spec, !s.IsZero() && !s.After(clock))
		}
	}
	if sum.allows(manual) {
		return nil
	}
	st := r.SyncWindows(target, at)
	return st.Allowed(manual)
}

// windowSummary is what the decision depends on: which kinds of windows
// apply, open or closed, and which let manual syncs through.
type windowSummary struct {
	denyOpen, denyOpenBlocksManual bool
	allowOpen, allowClosed         bool
	allowClosedLetsManual          bool
}

func (s *windowSummary) add(w v1alpha1.SyncWindow, open bool) {
	switch {
	case w.Kind == WindowDeny && open:
		s.denyOpen = true
		s.denyOpenBlocksManual = s.denyOpenBlocksManual || !w.ManualSync
	case w.Kind == WindowAllow && open:
		s.allowOpen = true
	case w.Kind == WindowAllow:
		s.allowClosed = true
		s.allowClosedLetsManual = s.allowClosedLetsManual || w.ManualSync
	}
}

// allows applies Argo CD's rules:
//
//   - no window applies: syncs are allowed;
//   - an open deny window blocks syncs, even when an allow window is open
//     too; a manual sync passes only if every open deny window has
//     manualSync;
//   - otherwise an open allow window allows syncs;
//   - otherwise, if allow windows apply (all closed), syncs are blocked; a
//     manual sync passes if one of them has manualSync.
func (s windowSummary) allows(manual bool) bool {
	switch {
	case s.denyOpen:
		return manual && !s.denyOpenBlocksManual
	case s.allowOpen || !s.allowClosed:
		return true
	}
	return manual && s.allowClosedLetsManual
}

// Allowed applies Argo CD's rules (see SyncAllowed) to the evaluated
// windows, and names the window that blocks a refused sync.
func (s *WindowState) Allowed(manual bool) error {
	var sum windowSummary
	for _, w := range s.Windows {
		sum.add(w.Window, w.Active)
	}
	if sum.allows(manual) {
		return nil
	}
	if sum.denyOpen {
		return s.deniedByDeny(manual, sum)
	}
	return s.deniedOutsideAllow(manual, sum)
}

// deniedByDeny explains a sync refused by an open deny window: for a
// manual sync the first one without manualSync, else the first one.
func (s *WindowState) deniedByDeny(manual bool, sum windowSummary) error {
	var w *WindowStatus
	for i := range s.Windows {
		c := &s.Windows[i]
		if c.Window.Kind != WindowDeny || !c.Active || (manual && c.Window.ManualSync) {
			continue
		}
		if w == nil || (w.Window.ManualSync && !c.Window.ManualSync) {
			w = c
		}
	}
	span := fmt.Sprintf("active from %s until %s", stamp(w.Start), stamp(w.End))
	switch {
	case manual:
		return denied(s.Project, "manual sync blocked by %s, %s; manual sync is not enabled for it", describeWindow(w), span)
	case !sum.denyOpenBlocksManual:
		return denied(s.Project, "automated sync blocked by %s, %s; manual syncs are allowed", describeWindow(w), span)
	}
	return denied(s.Project, "sync blocked by %s, %s", describeWindow(w), span)
}

// deniedOutsideAllow explains a sync refused because every allow window
// that applies is closed, naming the one that opens next.
func (s *WindowState) deniedOutsideAllow(manual bool, sum windowSummary) error {
	var next *WindowStatus
	for i := range s.Windows {
		c := &s.Windows[i]
		if c.Window.Kind != WindowAllow {
			continue
		}
		if next == nil || (!c.Start.IsZero() && (next.Start.IsZero() || c.Start.Before(next.Start))) {
			next = c
		}
	}
	opens := "does not open within five years"
	if !next.Start.IsZero() {
		opens = "opens next at " + stamp(next.Start)
	}
	switch {
	case manual:
		return denied(s.Project, "manual sync blocked outside allow windows: %s %s", describeWindow(next), opens)
	case sum.allowClosedLetsManual:
		return denied(s.Project, "automated sync blocked outside allow windows: %s %s; manual syncs are allowed", describeWindow(next), opens)
	}
	return denied(s.Project, "sync blocked outside allow windows: %s %s", describeWindow(next), opens)
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
