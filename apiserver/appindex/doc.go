// Package appindex keeps the API server's in-memory view of every
// Application and answers paged, filtered, ordered list queries from it
// without touching the Kubernetes API.
//
// The index is fed by an informer (Watch) or directly (Upsert, Delete).
// It stores the informer's objects as they are and never modifies them, so
// callers must not modify what Get and Page return either.
//
//	idx := appindex.New()
//	if err := idx.Watch(ctx, informer); err != nil { ... }
//	page, err := idx.Page(appindex.Query{
//		First:  100,
//		Filter: appindex.Filter{Projects: []string{"default"}, Health: []v1alpha1.HealthStatusCode{"Degraded"}},
//		Order:  appindex.Order{Field: appindex.OrderHealth},
//	})
//	next, err := idx.Page(appindex.Query{First: 100, After: page.EndCursor, ...same filter and order})
//
// Pages are keyset-paginated: a cursor names the position of the last
// item returned (its sort key and name), not an offset, so apps created
// or deleted while a client pages through the list never shift the pages
// it has yet to read. An app whose sort key changes between two pages
// (say its health changes while ordering by health) can appear on both or
// neither, as with any keyset pagination.
//
// Cost: Page scans every app once to apply the filter and count matches
// (a few hundred nanoseconds an app); ordering by name needs no sort, the
// other orders sort the matches.
package appindex
