package project

import (
	"slices"
	"time"
)

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
	// When s > clock no start lies in (clock-duration, clock], so s is
	// also the next start after clock.
	s := w.startAfter(clock)
	open = !s.IsZero() && !s.After(clock)
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

// startAfter returns the earliest start s > clock-duration. The answer
// holds for later readings too, until s when s > clock (the window is
// closed until then) and until s+duration otherwise (no later start can be
// the earliest before the occurrence ends), so it is remembered for that
// span.
func (w *window) startAfter(clock time.Time) time.Time {
	if n := w.next.Load(); n != nil && !clock.Before(n.from) && clock.Before(n.until) {
		return n.start
	}
	s := w.schedule.Next(clock.Add(-w.duration))
	if s.IsZero() {
		return s
	}
	until := s
	if !s.After(clock) {
		until = s.Add(w.duration)
	}
	w.next.Store(&nextStart{from: clock, until: until, start: s})
	return s
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
	_, before := guess.Add(-12 * time.Hour).Zone()
	_, after := guess.Add(12 * time.Hour).Zone()
	if before == after {
		return guess // no clock change near c: the common case
	}
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
