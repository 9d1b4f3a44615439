// Package cache keeps rendered manifests so the repository server renders a
// (repository, commit, path, parameters) combination once.
//
// A Cache signs every value with an HMAC key before it reaches a Backend and
// verifies it on read, so a tampered or foreign entry is a miss, never a
// manifest. Two backends implement the same contract, checked by one
// conformance suite (cachetest): Memory, an in-process LRU bounded by bytes
// (the default, nothing to install), and Redis, shared by several
// repo-server replicas.
//
//	c := cache.New(cache.NewMemory(256<<20), cache.Options{Secret: key})
//	k, _ := cache.KeyOf(renderParams)
//	if e, ok := c.Get(ctx, k); ok { ... }
//	c.Set(ctx, k, cache.Entry{Manifests: jsonArray})
//
// Failures are cached too, for a short time, so a broken repository cannot
// cause a storm of renders.
package cache
