// Package insights computes delivery insights — the four DORA figures
// (deployment frequency, lead time for changes, change failure rate, time
// to restore), sync duration and drift — from a bounded log of what each
// Application went through: the syncs that ended and its health and sync
// status transitions.
//
// The controller appends Records as things happen (Store keeps them in one
// ConfigMap per app, at most MaxRecords and Retention old); the API keeps
// an Index of per-day buckets per app, loaded at start and kept current
// from the ConfigMaps' watch, and answers a Query by adding the buckets
// of the apps and days it covers. docs/insights.md defines each figure.
package insights
