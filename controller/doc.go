// Package controller reconciles Applications: for each one it renders the
// desired manifests through the repository server, reads the live objects
// the cluster cache tracks to the app, compares them with the diff engine,
// judges health with the health engine, and writes the outcome to the
// Application's status — sync status with the compared revision,
// per-resource status and health, app health, conditions, summary images
// and source type:
//
//	status:
//	  sync: {status: OutOfSync, revision: 4f3c1e0..., comparedTo: {...}}
//	  health: {status: Missing}
//	  resources:
//	  - {kind: ConfigMap, namespace: shop, name: settings, status: OutOfSync, health: {status: Missing}}
//	  conditions:
//	  - {type: ComparisonError, message: 'rendering manifests: ...'}
//
// Refreshes are event-driven: a change to an Application's spec, labels or
// annotations (graphcd.io/refresh or argocd.argoproj.io/refresh: normal or
// hard; hard bypasses the manifest cache), and a change to any live object
// of the app or its descendants (through the cache's object-to-app index),
// plus a periodic resync with jitter. Status is patched only when it
// changed. Per-resource diffs stay in memory (Reconciler.State) and the
// resource tree in the cluster cache, not in the CRD.
//
// Sub-packages: cache (the cluster cache), diff, health. Sync operations,
// projects and multi-cluster destinations come with the sync issue; the
// only destination so far is the cluster graphcd runs in.
package controller
