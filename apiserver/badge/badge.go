// Package badge serves GET /api/badge: an SVG image of an application's
// health and sync status, or of a project's apps together, for README
// files and dashboards, as Argo CD's status badge. The image is public
// (no login), so it is off until graphcd-cm says statusbadge.enabled:
// "true"; while off, or for an app that does not exist, every request gets
// the same "unknown" image, so a badge tells nothing about what exists.
//
//	/api/badge?name=guestbook[&appNamespace=team-a][&showAppName=true][&revision=true][&keepFullRevision=true]
//	/api/badge?project=team-a[&project=team-b]
package badge

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
)

// Apps are the Applications badges read; appindex.Index is one.
type Apps interface {
	Get(key types.NamespacedName) *v1alpha1.Application
	Page(q appindex.Query) (appindex.Page, error)
}

// Options configure the handler.
type Options struct {
	Apps Apps
	// Namespace is where an app is looked up without appNamespace.
	Namespace string
	// Enabled reports whether badges are on (statusbadge.enabled).
	Enabled func() bool
}

// maxProjects bounds the projects one project badge sums up.
const maxProjects = 20

// New returns the handler of GET /api/badge.
func New(opts Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := opts.badge(r)
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = fmt.Fprint(w, b.svg()) //nolint:gosec // G705: every text in the image is escaped (svg), and the CSP forbids scripts
	})
}

// badge is what one image shows.
type badge struct {
	health   v1alpha1.HealthStatusCode
	sync     v1alpha1.SyncStatusCode
	name     string // shown above when set
	revision string // shown beside when set
}

func (o Options) badge(r *http.Request) badge {
	unknown := badge{health: v1alpha1.HealthStatusUnknown, sync: v1alpha1.SyncStatusCodeUnknown}
	if o.Enabled == nil || !o.Enabled() || o.Apps == nil {
		return unknown
	}
	q := r.URL.Query()
	if projects := q["project"]; len(projects) > 0 {
		if len(projects) > maxProjects {
			return unknown
		}
		return o.projectBadge(projects)
	}
	key := types.NamespacedName{Namespace: q.Get("appNamespace"), Name: q.Get("name")}
	if key.Namespace == "" {
		key.Namespace = o.Namespace
	}
	if len(validation.IsDNS1123Subdomain(key.Name)) > 0 || len(validation.IsDNS1123Label(key.Namespace)) > 0 {
		return unknown
	}
	app := o.Apps.Get(key)
	if app == nil {
		return unknown
	}
	out := badge{health: app.Status.Health.Status, sync: app.Status.Sync.Status}
	if q.Get("showAppName") == "true" {
		out.name = app.Name
	}
	if q.Get("revision") == "true" {
		out.revision = app.Status.Sync.Revision
		if len(app.Status.Sync.Revisions) > 0 {
			out.revision = app.Status.Sync.Revisions[0]
		}
		if q.Get("keepFullRevision") != "true" && len(out.revision) > 7 {
			out.revision = out.revision[:7]
		}
	}
	return out
}

// healthOrder is from worst to best: a project shows its worst app.
var healthOrder = []v1alpha1.HealthStatusCode{
	v1alpha1.HealthStatusDegraded, v1alpha1.HealthStatusMissing, v1alpha1.HealthStatusUnknown,
	v1alpha1.HealthStatusProgressing, v1alpha1.HealthStatusSuspended, v1alpha1.HealthStatusHealthy,
}

// projectBadge sums the apps of projects up: the worst health any has,
// OutOfSync when any is, Unknown when any is, else Synced. It counts with
// the index (no app is copied).
func (o Options) projectBadge(projects []string) badge {
	count := func(f appindex.Filter) int {
		f.Projects = projects
		page, err := o.Apps.Page(appindex.Query{Filter: f})
		if err != nil {
			return 0
		}
		return page.TotalCount
	}
	out := badge{health: v1alpha1.HealthStatusUnknown, sync: v1alpha1.SyncStatusCodeUnknown}
	if count(appindex.Filter{}) == 0 {
		return out
	}
	for _, h := range healthOrder {
		if count(appindex.Filter{Health: []v1alpha1.HealthStatusCode{h}}) > 0 {
			out.health = h
			break
		}
	}
	switch {
	case count(appindex.Filter{Sync: []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeOutOfSync}}) > 0:
		out.sync = v1alpha1.SyncStatusCodeOutOfSync
	case count(appindex.Filter{Sync: []v1alpha1.SyncStatusCode{v1alpha1.SyncStatusCodeUnknown}}) > 0:
		out.sync = v1alpha1.SyncStatusCodeUnknown
	default:
		out.sync = v1alpha1.SyncStatusCodeSynced
	}
	return out
}

// Colours of the statuses.
var (
	healthColors = map[v1alpha1.HealthStatusCode]string{
		v1alpha1.HealthStatusHealthy: "#18be52", v1alpha1.HealthStatusProgressing: "#0dadea", v1alpha1.HealthStatusDegraded: "#e96d76",
		v1alpha1.HealthStatusSuspended: "#766f94", v1alpha1.HealthStatusMissing: "#f4c030",
	}
	syncColors = map[v1alpha1.SyncStatusCode]string{v1alpha1.SyncStatusCodeSynced: "#18be52", v1alpha1.SyncStatusCodeOutOfSync: "#f4c030"}
)

const unknownColor = "#9aa5b1"

// charWidth is the width of one character of the badge's 11px font, near
// enough for a badge.
const charWidth = 7

// svg draws the badge: the health, then the sync status, each in its
// colour; the app's name above and the revision after when asked.
func (b badge) svg() string {
	health, sync := string(b.health), string(b.sync)
	if health == "" {
		health = string(v1alpha1.HealthStatusUnknown)
	}
	if sync == "" {
		sync = string(v1alpha1.SyncStatusCodeUnknown)
	}
	hc, ok := healthColors[v1alpha1.HealthStatusCode(health)]
	if !ok {
		hc = unknownColor
	}
	sc, ok := syncColors[v1alpha1.SyncStatusCode(sync)]
	if !ok {
		sc = unknownColor
	}
	segments := []struct{ text, color string }{{health, hc}, {sync, sc}}
	if b.revision != "" {
		segments = append(segments, struct{ text, color string }{b.revision, "#4d5a66"})
	}
	top := 0
	var body strings.Builder
	width := 0
	for _, s := range segments {
		width += textWidth(s.text)
	}
	if b.name != "" {
		top = 20
		width = max(width, textWidth(b.name))
		fmt.Fprintf(&body, `<rect width="%d" height="20" fill="#4d5a66"/><text x="%d" y="14">%s</text>`, width, width/2, html.EscapeString(b.name))
	}
	x := 0
	for _, s := range segments {
		w := textWidth(s.text)
		fmt.Fprintf(&body, `<rect x="%d" y="%d" width="%d" height="20" fill="%s"/><text x="%d" y="%d">%s</text>`,
			x, top, w, s.color, x+w/2, top+14, html.EscapeString(s.text))
		x += w
	}
	height := top + 20
	title := html.EscapeString(strings.TrimSpace(b.name + " " + health + " " + sync))
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%[1]d" height="%[2]d" role="img" aria-label="%[3]s">`+
		`<title>%[3]s</title><g font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" fill="#fff" text-anchor="middle">%[4]s</g></svg>`,
		max(x, width), height, title, body.String())
}

// textWidth is a segment's width for s, with padding.
func textWidth(s string) int { return utf8.RuneCountInString(s)*charWidth + 12 }
