package appindex

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/repourl"
)

// MaxFirst is the largest page Page returns.
const MaxFirst = 500

// OrderField is what a page is ordered by.
type OrderField string

// The orders. Every order breaks ties by namespace, then name.
const (
	// OrderName orders by namespace, then name.
	OrderName OrderField = "NAME"
	// OrderSync orders by sync status, attention first (see SyncRank).
	OrderSync OrderField = "SYNC"
	// OrderHealth orders by health status, worst first (see HealthRank).
	OrderHealth OrderField = "HEALTH"
	// OrderLastDeployed orders by the time of the last deployment in the
	// app's history, never-deployed apps first.
	OrderLastDeployed OrderField = "LAST_DEPLOYED"
)

// Order is a page's order. The zero value orders by name, ascending.
type Order struct {
	Field OrderField
	// Desc reverses the order, tie-breaks included.
	Desc bool
}

// Filter selects apps. Every set field must match (AND); a list matches
// when any of its values does (OR). The zero value selects every app.
type Filter struct {
	// Namespaces are the namespaces of the Application objects.
	Namespaces []string
	Projects   []string
	Sync       []v1alpha1.SyncStatusCode
	Health     []v1alpha1.HealthStatusCode
	// Labels selects by the Application's labels.
	Labels labels.Selector
	// Clusters match the destination's server URL or cluster name.
	Clusters []string
	// DestinationNamespaces match spec.destination.namespace.
	DestinationNamespaces []string
	// Repos match any source's repoURL, compared as repourl keys.
	Repos []string
	// TargetRevisions match any source's targetRevision.
	TargetRevisions []string
	// AutoSync, when set, selects apps with automated sync on (true) or
	// off (false).
	AutoSync *bool
	// Search is a case-insensitive substring of the app's name.
	Search string
	// Allow, when set, must also accept the app; it is asked last, only
	// for apps every other field selects. The API hides with it the apps
	// a caller may not see. It runs under the index's read lock: it must
	// not change the index.
	Allow func(*v1alpha1.Application) bool
}

// Query asks for one page.
type Query struct {
	Filter Filter
	Order  Order
	// First is the page size, 0 to MaxFirst. Zero returns no items, just
	// the count.
	First int
	// After is the EndCursor of the previous page; empty for the first.
	After string
}

// Page is one page of apps.
type Page struct {
	Items []*v1alpha1.Application
	// positions[i] is where Items[i] is; see Cursor.
	positions []cursor
	// EndCursor names the last item; empty when Items is.
	EndCursor string
	// HasNextPage reports whether apps follow this page.
	HasNextPage bool
	// HasPreviousPage reports whether apps precede this page.
	HasPreviousPage bool
	// TotalCount is the number of apps the filter selects, on all pages.
	TotalCount int
}

// ErrBadQuery wraps every error caused by the query rather than the index;
// its message is safe to show to the client.
var ErrBadQuery = errors.New("bad query")

func badQuery(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadQuery, fmt.Sprintf(format, args...))
}

// Page returns the page q asks for.
func (x *Index) Page(q Query) (Page, error) {
	if q.First < 0 || q.First > MaxFirst {
		return Page{}, badQuery("first must be between 0 and %d, got %d", MaxFirst, q.First)
	}
	switch q.Order.Field {
	case "":
		q.Order.Field = OrderName
	case OrderName, OrderSync, OrderHealth, OrderLastDeployed:
	default:
		return Page{}, badQuery("unknown order %q", q.Order.Field)
	}
	var after *cursor
	if q.After != "" {
		c, err := decodeCursor(q.After)
		if err != nil {
			return Page{}, err
		}
		if c.Order != q.Order {
			return Page{}, badQuery("the cursor belongs to another order than the one asked for")
		}
		after = &c
	}
	m := newMatcher(q.Filter)

	x.mu.RLock()
	matches := make([]*entry, 0, min(len(x.sorted), 1024))
	for _, e := range x.sorted {
		if m.match(e) {
			matches = append(matches, e)
		}
	}
	x.mu.RUnlock()

	// matches are in name order; a stable sort on the order's value alone
	// keeps that order (reversed for Desc) among equal values.
	if q.Order.Desc {
		slices.Reverse(matches)
	}
	if value := valueOf(q.Order.Field); value != nil {
		slices.SortStableFunc(matches, func(a, b *entry) int {
			if q.Order.Desc {
				return cmp.Compare(value(b), value(a))
			}
			return cmp.Compare(value(a), value(b))
		})
	}
	less := comparer(q.Order)
	start := 0
	if after != nil {
		// The first match after the cursor's position; the app the cursor
		// names may be gone or may have moved.
		at := after.position()
		start, _ = slices.BinarySearchFunc(matches, at, func(e, at *entry) int {
			if less(e, at) <= 0 {
				return -1
			}
			return 1
		})
	}
	end := min(start+q.First, len(matches))
	page := Page{
		TotalCount:      len(matches),
		HasPreviousPage: start > 0,
		HasNextPage:     end < len(matches),
		Items:           make([]*v1alpha1.Application, 0, end-start),
		positions:       make([]cursor, 0, end-start),
	}
	for _, e := range matches[start:end] {
		page.Items = append(page.Items, e.app)
		page.positions = append(page.positions, cursorOf(e, q.Order))
	}
	if n := len(page.positions); n > 0 {
		page.EndCursor = page.Cursor(n - 1)
	}
	return page, nil
}

// Cursor returns the cursor that names Items[i], for Query.After. Cursors
// are encoded on demand: most clients only read EndCursor.
func (p Page) Cursor(i int) string { return p.positions[i].encode() }

// valueOf returns the sort value of an order, or nil for OrderName.
func valueOf(f OrderField) func(e *entry) int64 {
	switch f {
	case OrderSync:
		return func(e *entry) int64 { return int64(e.syncRank) }
	case OrderHealth:
		return func(e *entry) int64 { return int64(e.healthRank) }
	case OrderLastDeployed:
		return func(e *entry) int64 { return e.lastDeployed }
	}
	return nil
}

// comparer returns the ordering of o over entries: its value, then the
// key, both reversed for Desc.
func comparer(o Order) func(a, b *entry) int {
	value := valueOf(o.Field)
	return func(a, b *entry) int {
		c := 0
		if value != nil {
			c = cmp.Compare(value(a), value(b))
		}
		if c == 0 {
			c = compareKeys(a.key, b.key)
		}
		if o.Desc {
			return -c
		}
		return c
	}
}

// cursor is the position of one item in one order: its sort value and its
// key. It is sent to clients as opaque base64 JSON.
type cursor struct {
	Order Order                `json:"o"`
	Value int64                `json:"v,omitempty"`
	Key   types.NamespacedName `json:"k"`
}

func cursorOf(e *entry, o Order) cursor {
	c := cursor{Order: o, Key: e.key}
	if value := valueOf(o.Field); value != nil {
		c.Value = value(e)
	}
	return c
}

// position returns an entry that sorts where the cursor points.
func (c cursor) position() *entry {
	return &entry{key: c.Key, syncRank: int(c.Value), healthRank: int(c.Value), lastDeployed: c.Value}
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c) // plain strings and numbers: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// maxCursorLen bounds a cursor before decoding: a real one is well under
// this (two Kubernetes names and a number).
const maxCursorLen = 1024

func decodeCursor(s string) (cursor, error) {
	var c cursor
	if len(s) > maxCursorLen {
		return c, badQuery("invalid cursor")
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Key.Name == "" {
		return c, badQuery("invalid cursor")
	}
	return c, nil
}

// matcher applies a Filter to entries, with the filter's lists turned into
// sets once per query.
type matcher struct {
	f          Filter
	namespaces set[string]
	projects   set[string]
	sync       set[v1alpha1.SyncStatusCode]
	health     set[v1alpha1.HealthStatusCode]
	clusters   set[string]
	destNS     set[string]
	repos      set[string]
	revisions  set[string]
	search     string
}

func newMatcher(f Filter) *matcher {
	repos := make([]string, len(f.Repos))
	for i, r := range f.Repos {
		repos[i] = repourl.Normalize(r)
	}
	return &matcher{
		f:          f,
		namespaces: setOf(f.Namespaces),
		projects:   setOf(f.Projects),
		sync:       setOf(f.Sync),
		health:     setOf(f.Health),
		clusters:   setOf(f.Clusters),
		destNS:     setOf(f.DestinationNamespaces),
		repos:      setOf(repos),
		revisions:  setOf(f.TargetRevisions),
		search:     strings.ToLower(f.Search),
	}
}

func (m *matcher) match(e *entry) bool {
	a := e.app
	switch {
	case !m.namespaces.has(a.Namespace),
		!m.projects.has(projectOf(a)),
		!m.sync.has(e.sync),
		!m.health.has(e.health),
		!m.destNS.has(a.Spec.Destination.Namespace),
		m.clusters != nil && !m.clusters.contains(a.Spec.Destination.Server) && !m.clusters.contains(a.Spec.Destination.Name),
		m.f.AutoSync != nil && *m.f.AutoSync != e.autoSync,
		m.search != "" && !strings.Contains(e.lowerName, m.search),
		m.repos != nil && !slices.ContainsFunc(e.repos, m.repos.contains),
		m.revisions != nil && !m.anyRevision(a),
		m.f.Labels != nil && !m.f.Labels.Matches(labels.Set(a.Labels)),
		m.f.Allow != nil && !m.f.Allow(a):
		return false
	}
	return true
}

func (m *matcher) anyRevision(a *v1alpha1.Application) bool {
	if s := a.Spec.Source; s != nil && m.revisions.contains(s.TargetRevision) {
		return true
	}
	for _, s := range a.Spec.Sources {
		if m.revisions.contains(s.TargetRevision) {
			return true
		}
	}
	return false
}

// projectOf returns the app's project; an empty one is "default", as in
// Argo CD.
func projectOf(a *v1alpha1.Application) string {
	if a.Spec.Project == "" {
		return "default"
	}
	return a.Spec.Project
}

// set is a filter list as a set; a nil set matches everything.
type set[T comparable] map[T]struct{}

func setOf[T comparable](values []T) set[T] {
	if len(values) == 0 {
		return nil
	}
	s := make(set[T], len(values))
	for _, v := range values {
		s[v] = struct{}{}
	}
	return s
}

// has reports whether v passes the filter: always for a nil set.
func (s set[T]) has(v T) bool {
	if s == nil {
		return true
	}
	_, ok := s[v]
	return ok
}

// contains reports whether v is in the set (false for a nil set).
func (s set[T]) contains(v T) bool {
	_, ok := s[v]
	return ok
}
