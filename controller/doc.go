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
// plus a periodic resync with jitter, and the retries of a comparison that
// failed with a ComparisonError (see comparisonRetry). Status is patched
// only when it changed. Per-resource diffs stay in memory
// (Reconciler.State) and the resource tree in the cluster cache, not in
// the CRD.
//
// A refresh annotation also asks the repository service to forget the
// revisions it resolved for the app's repository, when it offers that
// (RevisionInvalidator), so a normal refresh sees a commit pushed a moment
// ago; a remote one passes that on to every replica (reposerver/remote).
//
// # A reconcile
//
// Each reconcile of an app runs the same steps in order, each a small
// method of its own: load the app, claim it (its destination cluster
// belongs to this shard), catch up (make the status write its last
// reconcile queued), finalize an app being deleted and stop there, take
// one step of its operation, compare, let the automated sync policy
// decide, summarize the outcome as conditions (the only place conditions
// are set), write the status, announce the events, and follow up (clear
// the refresh annotation, request the automated sync).
//
// # Settings
//
// The controller watches the graphcd-cm ConfigMap in its namespace
// (SettingsConfigMap), through the process's kubewatch.Source
// (Config.Watch) that the other readers of graphcd-cm share. When it
// changes, the settings are parsed again, the health engine (Lua checks)
// and the ignoreDifferences rules are rebuilt and swapped in atomically,
// and every Application is refreshed:
//
//	data:
//	  resource.customizations.health.test.graphcd.io_Widget: |
//	    hs = {status = "Degraded", message = "widget says no"}
//	    return hs
//	  resource.customizations.ignoreDifferences.ConfigMap: |
//	    jsonPointers: [/data/mode]
//
// An edit that does not parse, or a Lua check that does not compile, is
// logged and the previous settings stay. Deleting graphcd-cm restores the
// settings the controller started with. The instance label key, tracking
// method and resource inclusions/exclusions shape the cluster cache and
// take effect on restart only.
//
// # Events
//
// When an app's sync status or health changes, a Kubernetes Event
// (events.k8s.io/v1) is recorded on the Application, reason
// SyncStatusChanged or HealthStatusChanged, note "OutOfSync -> Synced".
// In process, Controller.Subscribe streams typed Events of every app:
// ResourceChanged (a live object changed), Refreshed (after every
// comparison), SyncStatusChanged and HealthChanged, each with the app's
// sync status, health and revision. A transition is announced once, from
// what the app's previous announcement said: a comparison is announced
// before its status write lands, and a reconcile that computes it again
// after that write failed does not repeat it. Each subscriber has its own
// buffer; a subscriber that falls behind misses events (Reconciler.Dropped
// counts them) and never slows the reconciler. Its channel closes when its
// context ends.
//
// Secret values never leave the diff engine: per-resource diffs of Secrets
// carry masks, and the status holds no data at all.
//
// # Destination clusters
//
// Destinations are the clusters of the cluster Secrets in the controller's
// namespace (see package clusters), plus the cluster graphcd runs in as
// https://kubernetes.default.svc / in-cluster. Every reconcile resolves
// spec.destination (server or name) through the cluster registry; a
// destination that names no registered cluster gives an InvalidSpecError
// quoting the registry, and a sync of such an app ends in Error:
//
//	conditions:
//	- {type: InvalidSpecError, message: 'invalid spec: there are no clusters with this name: prod-eu: cluster not registered'}
//
// The controller keeps one cluster cache per destination, keyed by server
// URL. The in-cluster cache starts with the controller; any other starts
// when an app first targets its cluster (registered clusters no app uses
// cost nothing), with the controller's QPS and Burst. Changing a cluster's
// Secret restarts its cache with the new credentials, deleting it stops
// the cache, and both refresh the cluster's apps. A cluster Secret's
// namespaces limit its cache to those namespaces (and clusterResources
// lets cluster-scoped kinds in); a manifest outside them fails the
// comparison with a ComparisonError naming it, and ends the sync Failed,
// without retries, before anything is applied:
//
//	conditions:
//	- type: ComparisonError
//	  message: 'resources outside the destination cluster''s namespaces: ConfigMap kube-system/settings is in namespace kube-system, which the cluster secret of https://prod-eu.example.com does not allow (its namespaces: db, web)'
//
// A cache that cannot start (an unreachable cluster) gives its apps a
// ComparisonError and is tried again after connectRetry. A cluster that
// stops answering while its cache runs is found by a probe (see
// clusterProbe) and reported the same way until it answers again. Each cache's
// events refresh only the apps of its cluster: live objects name their
// app by the instance label, so the same app name on two clusters must
// not mix. Syncs apply through a dynamic client and REST mapper of the
// destination cluster, kept with its cache. Controller.LiveFor(server)
// gives the API a cluster's resource trees; Controller.Live is the
// in-cluster one.
//
// # Sharding and leader election
//
// Config.Shard splits the destination clusters between controllers, as
// Argo CD's --shard/--shards do: ShardOf maps a cluster's server URL to one
// of M shards by rendezvous hashing, so every replica agrees without
// talking to the others and going from M to M+1 shards moves only about
// 1/(M+1) of the clusters; with ShardRoundRobin the registered clusters,
// sorted by URL, are dealt to the shards in turn, evenly, and the cluster
// set deals them again as clusters come and go. A cluster Secret's shard
// key pins its cluster to that shard instead (Shard.OwnsCluster). A
// controller reconciles only
// the apps whose destination its shard owns (a destination naming no
// registered cluster goes to shard 0, which reports it invalid); it writes
// nothing to the others and runs no cache for their clusters.
//
// With Config.LeaderElection the replicas of a shard compete for the Lease
// graphcd-controller-shard-<N> in the controller's namespace. Only the
// holder watches the cluster Secrets and starts the cluster caches and
// the reconciler; a standby runs no informers and writes nothing, and
// takes over when the holder stops renewing, at once when the holder shut
// down cleanly (it releases the Lease). graphcd_app_reconciles_total
// counts the reconciles a replica performed and
// graphcd_cluster_cache_running shows its cluster caches, in
// controller-runtime's metrics registry.
//
// # Notifications
//
// When a notifications ConfigMap (graphcd-notifications-cm, else
// argocd-notifications-cm) exists in the controller's namespace, a second
// reconciler of Applications delivers Argo CD-style notifications for the
// apps of its shard, on the leader only: every change of an app evaluates
// its subscribed triggers, and each notification due is claimed on the app
// (the notified.notifications.graphcd.io annotation, written with the
// app's resourceVersion as a precondition) before it is sent, and recorded
// sent, failed (retried with backoff) or dead after.
// Config.DisableNotifications turns it off. See docs/notifications.md.
//
// Sub-packages: cache (the cluster cache), clusters (the cluster
// registry), diff, health, notifications, project, sync.
package controller
