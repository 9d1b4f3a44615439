// Package appstate holds what the application controller learned in its
// last comparison of each Application — the resource tree and the managed
// resources with their live and desired YAML and masked diffs — so that
// API replicas can serve it without reaching into the controller.
//
// The controller writes after every comparison that changed something, and
// deletes when an Application goes away:
//
//	store := appstate.NewRedis(client, "", appstate.RedisOptions{Secret: secret})
//	w := appstate.NewWriter(store, appstate.WriterOptions{})
//	written, err := w.Write(ctx, appstate.State{App: app, Revision: sha, Tree: nodes, Managed: resources})
//	err = w.Delete(ctx, app)
//
// The API reads one application, or a page of them with a single MGET (a
// dataloader's batch function):
//
//	st, err := store.Get(ctx, app)             // nil, nil when absent
//	sts, err := store.GetMany(ctx, apps)       // sts[i] is apps[i]'s, or nil
//
// Redis is a cache, never a source of truth: a missing state means "not
// reconciled yet by a controller that writes states", and every value is
// signed with HMAC-SHA256 over its key and bytes, so a value Redis hands
// back altered, or copied from another application's key, reads as absent
// and is counted (Redis.Rejected). Values expire after RedisOptions.TTL;
// the Writer rewrites unchanged states well before that.
//
// Secret values never reach the store in clear: the controller masks
// Live, Desired and Diff of Secrets with the diff engine's masks
// (controller/diff.HideSecretData) before writing.
package appstate
