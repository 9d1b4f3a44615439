// Package audit keeps graphcd's audit trail: one Entry for every mutation
// made through the API — who (subject and groups), from where (the client
// address, through trusted proxies only), which object, what changed (an
// RFC 6902 JSON patch with Secret values and credential fields redacted)
// and the outcome (success, or the error code the client got).
//
// The API server records at one place: a root-field middleware opens a
// Recorder for each mutation (Begin) and, when the field has resolved,
// turns it into an Entry and hands it to the Log. The services that write
// Kubernetes objects (appops, secretops, catalog) report the object
// before and after each write into the Recorder of their context
// (Change); the resolvers report the RBAC object they authorized (Authorized), which names
// the object of a refused mutation. Code without a Recorder in its context
// (the controller, tests) reports into nothing.
//
// The Log keeps entries in a Store — a bounded ring in memory, or a
// capped Redis stream shared by API replicas — and writes a Kubernetes
// Event on the object of each entry (in graphcd's namespace for objects
// without one). Stores stream new entries to subscribers at most once:
// a subscriber that falls behind misses entries and can list them.
//
// Use:
//
//	log := &audit.Log{Store: audit.NewMemory(10_000), Events: audit.NewEventWriter(kc, "graphcd", "graphcd-server")}
//	ctx, rec := audit.Begin(ctx)
//	// ... writers call audit.Change(ctx, before, after) ...
//	log.Record(ctx, rec.Entry(audit.Call{Field: "createApplication"}))
package audit
