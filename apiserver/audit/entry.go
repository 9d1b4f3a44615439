package audit

import (
	"encoding/json"
	"slices"
	"time"
)

// Outcome is how a mutation ended.
type Outcome string

// Outcomes of mutations.
const (
	Success Outcome = "SUCCESS"
	Failure Outcome = "FAILURE"
)

// Object names what a mutation acted on.
type Object struct {
	// Kind is the Kubernetes kind (Application, AppProject, Secret, a
	// live resource's kind), or for a mutation refused before it found
	// its object, the RBAC resource ("applications").
	Kind      string `json:"kind,omitempty"`
	Group     string `json:"group,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Project is the AppProject the object belongs to, when it has one.
	Project string `json:"project,omitempty"`
	// UID identifies the object in its cluster, when known.
	UID string `json:"uid,omitempty"`
	// Live says the object is a live resource of a destination cluster
	// (written through catalog), not one of the management cluster's.
	Live bool `json:"live,omitempty"`
}

// Entry is one mutation in the audit trail.
type Entry struct {
	// ID orders entries: a later entry has a greater ID in the same
	// store. Set by the Store.
	ID   string    `json:"id,omitempty"`
	Time time.Time `json:"time"`
	// User is the subject of the caller ("anonymous" with authentication
	// off), Groups their SSO groups.
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
	// Client is the client's address (see auth.ClientAddr).
	Client string `json:"client,omitempty"`
	// Operation is the GraphQL operation's name, Field the mutation.
	Operation string `json:"operation,omitempty"`
	Field     string `json:"field"`
	Object    Object `json:"object"`
	// Patch is the change as an RFC 6902 JSON patch from the object before
	// to after, redacted; null when nothing was written.
	Patch json.RawMessage `json:"patch,omitempty"`
	// PatchOmitted says the patch was larger than MaxPatchBytes and left
	// out.
	PatchOmitted bool    `json:"patchOmitted,omitempty"`
	Outcome      Outcome `json:"outcome"`
	// ErrorCode is the code of the error the client got (FORBIDDEN, ...).
	ErrorCode string `json:"errorCode,omitempty"`
}

// Filter selects entries; zero fields select everything.
type Filter struct {
	User                           string
	Kind, Namespace, Name, Project string
	Field                          string
	Outcome                        Outcome
	Since, Until                   time.Time
}

// Match reports whether e passes f.
func (f Filter) Match(e *Entry) bool {
	switch {
	case f.User != "" && e.User != f.User,
		f.Kind != "" && e.Object.Kind != f.Kind,
		f.Namespace != "" && e.Object.Namespace != f.Namespace,
		f.Name != "" && e.Object.Name != f.Name,
		f.Project != "" && e.Object.Project != f.Project,
		f.Field != "" && e.Field != f.Field,
		f.Outcome != "" && e.Outcome != f.Outcome,
		!f.Since.IsZero() && e.Time.Before(f.Since),
		!f.Until.IsZero() && !e.Time.Before(f.Until):
		return false
	}
	return true
}

// Query asks a Store for one page of entries, newest first.
type Query struct {
	// First is the page size (at least 1).
	First int
	// After is the ID of the last entry of the previous page; the page
	// holds older entries only.
	After  string
	Filter Filter
	// Allow, when set, hides the entries it refuses (the caller's RBAC).
	// List calls it from its own goroutine, outside the store's lock.
	Allow func(*Entry) bool
}

func (q Query) match(e *Entry) bool {
	return q.Filter.Match(e) && (q.Allow == nil || q.Allow(e))
}

// Page is one page of entries, newest first.
type Page struct {
	Entries []Entry
	// More says older entries match too.
	More bool
}

// clone returns a copy of e that shares nothing mutable with it.
func (e Entry) clone() Entry {
	e.Groups = slices.Clone(e.Groups)
	e.Patch = slices.Clone(e.Patch)
	return e
}
