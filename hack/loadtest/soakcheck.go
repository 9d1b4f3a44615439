package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// soakEvent is what a soak subscriber asks of each application event.
type soakEvent struct {
	Lagged         bool       `json:"lagged"`
	Type           *string    `json:"type"`
	Time           *time.Time `json:"time"`
	Name           *string    `json:"name"`
	SyncStatus     *string    `json:"syncStatus"`
	Health         *string    `json:"health"`
	Revision       *string    `json:"revision"`
	OperationPhase *string    `json:"operationPhase"`
}

// appStream is what one subscriber has seen of one application so far.
type appStream struct {
	last     time.Time
	lastRev  int
	lastSync string // syncStatus of the last SyncStatusChanged; "" before one
	synced   int    // the newest push seen with syncStatus Synced; -1 before
}

// eventChecker checks the events every subscriber receives, as they
// arrive: per application, times and revisions never go back, and two
// SyncStatusChanged in a row never carry the same status. Revisions are
// numbered by the push that made them (0 for the first commit), so
// "going back" means an event about an older commit after one about a
// newer.
type eventChecker struct {
	mu sync.Mutex
	// revisions maps each pushed commit to its push's number.
	revisions map[string]int
	// streams[subscriber][app]
	streams []map[string]*appStream

	events, lagged, timeBack, revBack, duplicates, unknownRev, unnamed int
	byType                                                             map[string]int
	// examples of each violation, a few at most, for the report.
	examples []string
}

func newEventChecker(subscribers int) *eventChecker {
	c := &eventChecker{revisions: map[string]int{}, byType: map[string]int{}, streams: make([]map[string]*appStream, subscribers)}
	for i := range c.streams {
		c.streams[i] = map[string]*appStream{}
	}
	return c
}

// pushed records the commit of push n.
func (c *eventChecker) pushed(sha string, n int) {
	c.mu.Lock()
	c.revisions[sha] = n
	c.mu.Unlock()
}

func (c *eventChecker) example(format string, args ...any) {
	if len(c.examples) < 12 {
		c.examples = append(c.examples, fmt.Sprintf(format, args...))
	}
}

// observe checks one event received by subscriber sub.
func (c *eventChecker) observe(sub int, ev *soakEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.Lagged {
		c.lagged++
		c.example("subscriber %d: a lagged marker (events were dropped)", sub)
		return
	}
	c.events++
	typ, name := deref(ev.Type), deref(ev.Name)
	c.byType[typ]++
	if name == "" || ev.Time == nil {
		c.unnamed++
		c.example("subscriber %d: a %s event without a name or time", sub, typ)
		return
	}
	s := c.streams[sub][name]
	if s == nil {
		s = &appStream{lastRev: -1, synced: -1}
		c.streams[sub][name] = s
	}
	if ev.Time.Before(s.last) {
		c.timeBack++
		c.example("subscriber %d, app %s: %s at %s after an event at %s", sub, name, typ, ev.Time.Format(time.RFC3339Nano), s.last.Format(time.RFC3339Nano))
	} else {
		s.last = *ev.Time
	}
	if rev := deref(ev.Revision); rev != "" {
		n, ok := c.revisions[rev]
		switch {
		case !ok:
			c.unknownRev++
			c.example("subscriber %d, app %s: %s with revision %.12s, which no push made", sub, name, typ, rev)
		case n < s.lastRev:
			c.revBack++
			c.example("subscriber %d, app %s: %s about push %d after one about push %d", sub, name, typ, n, s.lastRev)
		default:
			s.lastRev = n
			if deref(ev.SyncStatus) == "Synced" && n > s.synced {
				s.synced = n
			}
		}
	}
	if typ == "SyncStatusChanged" {
		status := deref(ev.SyncStatus)
		if status == s.lastSync {
			c.duplicates++
			c.example("subscriber %d, app %s: SyncStatusChanged to %s twice in a row", sub, name, status)
		}
		s.lastSync = status
	}
}

// missing lists, for every subscriber sub watching app, the apps whose
// last change (push want[app]) it has not seen Synced yet.
func (c *eventChecker) missing(watch func(sub int) []string, want map[string]int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for sub := range c.streams {
		for _, app := range watch(sub) {
			w, ok := want[app]
			if !ok {
				continue
			}
			got := -1
			if s := c.streams[sub][app]; s != nil {
				got = s.synced
			}
			if got < w {
				out = append(out, fmt.Sprintf("subscriber %d, app %s: push %d never seen Synced (newest seen: %d)", sub, app, w, got))
			}
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// sample is one measurement of the server.
type sample struct {
	at         time.Duration // since the load started
	rss        int64         // bytes
	workers    int64         // RSS of the server's children (render workers), bytes
	goroutines float64
	cpu        float64 // CPU seconds of the server
	events     int     // received by every subscriber so far
	logins     int
	pushes     int
}

// fit is a least-squares line y = a + b·x.
type fit struct{ a, b float64 }

func (f fit) at(x float64) float64 { return f.a + f.b*x }

// leastSquares fits a line through (xs, ys); with fewer than two distinct
// xs the slope is 0.
func leastSquares(xs, ys []float64) fit {
	n := float64(len(xs))
	if n == 0 {
		return fit{}
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return fit{a: sy / n}
	}
	b := (n*sxy - sx*sy) / d
	return fit{a: (sy - b*sx) / n, b: b}
}

// writeCSV writes the samples, one a line, after a header.
func writeCSV(w io.Writer, samples []sample, warmup time.Duration) error {
	if _, err := fmt.Fprintln(w, "seconds,phase,rss_bytes,workers_rss_bytes,goroutines,cpu_seconds,events,logins,pushes"); err != nil {
		return err
	}
	for _, s := range samples {
		phase := "steady"
		if s.at < warmup {
			phase = "warmup"
		}
		if _, err := fmt.Fprintf(w, "%.1f,%s,%d,%d,%.0f,%.2f,%d,%d,%d\n", s.at.Seconds(), phase, s.rss, s.workers, s.goroutines, s.cpu, s.events, s.logins, s.pushes); err != nil {
			return err
		}
	}
	return nil
}

// lineChart is one curve over time, drawn as an SVG line chart: the warm-up
// shaded, the least-squares line of the rest dashed.
type lineChart struct {
	title, unit string
	// xunit names the x axis: "minutes" when empty.
	xunit  string
	xs, ys []float64 // minutes (or xunit), values in unit
	warmup float64   // minutes
	line   fit       // over the samples after the warm-up, in minutes and unit
	note   string    // under the title
}

// svg writes c as a 720×360 SVG picture.
func (c lineChart) svg(w io.Writer) error {
	const width, height = 720.0, 360.0
	const left, right, top, bottom = 70.0, 20.0, 50.0, 45.0
	pw, ph := width-left-right, height-top-bottom
	xmax := 1.0
	if len(c.xs) > 0 {
		xmax = math.Max(c.xs[len(c.xs)-1], 1e-9)
	}
	ymax := 0.0
	for _, y := range c.ys {
		ymax = math.Max(ymax, y)
	}
	ystep := niceStep(ymax / 5)
	ytop := math.Max(ystep*math.Ceil(ymax*1.1/ystep), ystep)
	xstep := niceStep(xmax / 6)
	px := func(x float64) float64 { return left + x/xmax*pw }
	py := func(y float64) float64 { return top + ph - y/ytop*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">%s</text>`+"\n", left, escapeXML(c.title))
	fmt.Fprintf(&b, `<text x="%.0f" y="38" fill="#555">%s</text>`+"\n", left, escapeXML(c.note))
	if c.warmup > 0 {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#eee"/>`+"\n", px(0), top, px(math.Min(c.warmup, xmax))-px(0), ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#888">warm-up</text>`+"\n", px(0)+4, top+14)
	}
	for y := 0.0; y <= ytop+ystep/2; y += ystep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), left+pw, py(y))
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, py(y)+4, trimFloat(y))
	}
	for x := 0.0; x <= xmax+xstep/100; x += xstep {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/>`+"\n", px(x), top+ph, px(x), top+ph+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(x), top+ph+18, trimFloat(x))
	}
	xunit := c.xunit
	if xunit == "" {
		xunit = "minutes"
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", left+pw/2, height-6, escapeXML(xunit))
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+ph/2, escapeXML(c.unit))
	fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", left, top, pw, ph)
	if len(c.xs) > 0 {
		b.WriteString(`<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="`)
		for i := range c.xs {
			fmt.Fprintf(&b, "%.1f,%.1f ", px(c.xs[i]), py(c.ys[i]))
		}
		b.WriteString(`"/>` + "\n")
		x0 := math.Min(c.warmup, xmax)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n",
			px(x0), py(c.line.at(x0)), px(xmax), py(c.line.at(xmax)))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep rounds v up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// percentile returns the p-th percentile (0–100) of ds, 0 when empty.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
