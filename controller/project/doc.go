// Package project enforces AppProjects: which repositories an application
// may deploy from, to which clusters and namespaces, which kinds of
// resources it may create, from which namespaces Applications may use the
// project, when it may sync, which keys must sign its commits, and which
// resources are not reported as orphaned. The rules are Argo CD's, so
// projects written for Argo CD mean the same here.
//
//	apiVersion: graphcd.io/v1alpha1
//	kind: AppProject
//	metadata:
//	  name: team-a
//	  namespace: graphcd
//	spec:
//	  sourceRepos:
//	  - '!https://github.com/example/legacy-*'  # never these
//	  - 'https://github.com/example/*'          # one path segment
//	  - 'https://gitlab.example.com/team-a/**'  # any depth
//	  destinations:
//	  - server: '*'
//	    namespace: '!kube-system'               # nowhere in kube-system
//	  - server: https://kubernetes.default.svc
//	    namespace: 'team-a-*'
//	  - name: 'prod-*'                          # clusters by registered name
//	    namespace: team-a
//	  clusterResourceWhitelist:                 # none when empty
//	  - {group: '', kind: Namespace}
//	  namespaceResourceBlacklist:
//	  - {group: '', kind: ResourceQuota}
//	  sourceNamespaces: ['team-a-apps', '/^team-a-ci-[0-9]+$/']
//	  syncWindows:
//	  - kind: allow
//	    schedule: '0 8 * * 1-5'
//	    duration: 10h
//	    timeZone: Europe/Berlin
//	    applications: ['*']
//	  - kind: deny
//	    schedule: '0 0 24 12 *'
//	    duration: 48h
//	    clusters: ['prod-*']
//	    manualSync: true
//	    description: holiday freeze
//	  orphanedResources:
//	    warn: true
//	    ignore:
//	    - {kind: ConfigMap, name: 'istio-ca-*'}
//	  signatureKeys:
//	  - keyID: 4AEE18F83AFDEB23
//	  destinationServiceAccounts:               # used when impersonation is on
//	  - server: https://kubernetes.default.svc
//	    namespace: 'team-a-*'
//	    defaultServiceAccount: deployer         # in the destination namespace
//	  - server: '*'
//	    namespace: '*'
//	    defaultServiceAccount: team-a:deployer  # namespace:name
//
// Compile a project once per change and check against the result; a
// Cache does that by metadata.generation:
//
//	rules, err := cache.Rules(proj) // *InvalidError: the spec cannot be enforced
//	err = rules.SourceAllowed(app.Spec.Source.RepoURL)
//	err = rules.DestinationAllowed(dst.Server, dst.Name, dst.Namespace)
//	err = rules.ResourceAllowed(group, kind, obj.GetNamespace(), dst.Server, dst.Name)
//	err = rules.SyncAllowed(project.WindowTarget{...}, time.Now(), manual)
//	sa, err := rules.ServiceAccountFor(dst.Server, dst.Namespace, app.Namespace)
//
// A check that refuses returns a *DeniedError whose message users see in
// conditions and API errors, worded as Argo CD words it:
//
//	application repo https://github.com/other/x.git is not permitted in project 'team-a'
//	application destination server 'https://kubernetes.default.svc' and namespace 'kube-system' is not permitted in project 'team-a' (denied by destination {server: '*', namespace: '!kube-system'})
//	resource rbac.authorization.k8s.io:ClusterRole is not permitted in project team-a (not in clusterResourceWhitelist)
//
// A spec that cannot be enforced as written — a malformed glob, sync
// window, kind or key — permits nothing: Compile returns an *InvalidError
// naming every bad field, and the package-level functions, which compile
// on each call, return it from every check. Validate reports the same
// problems for a spec alone, for admission.
//
// # Patterns
//
// Patterns are globs: "*" matches any run of characters, "?" one
// character, "[a-z]" and "[!a-z]" one character of or not of a class,
// "{a,b}" either alternative, and "\" escapes the next character. In
// sourceRepos "*" and "?" stop at "/" and "**" crosses it; elsewhere
// (destinations, kinds, windows, orphaned resources) they cross "/" too. A
// pattern that is exactly "*" matches everything, empty values included.
// Kinds and names are case-sensitive.
//
// # Repositories
//
// A repository is allowed when an entry without "!" matches it and no
// entry with "!" does; "!*" is refused as meaningless. URLs are compared
// as Argo CD compares them: trimmed and lower-cased (host and path), with
// "git@host:org/repo" read as "git@host/org/repo", a leading "ssh://"
// dropped (so both SSH spellings are one), and trailing "/" and ".git"
// ignored; patterns are treated the same way. Credentials in a URL never
// reach a message.
//
// # Destinations
//
// A destination is allowed when an entry without "!" allows it — its
// server or its name matches (an application may give either or both)
// and its namespace matches, "" being cluster-scoped — and no negated
// field refuses it. A negated field refuses on its own, whatever the
// entry's other fields say, so {server: '*', namespace: '!kube-system'}
// keeps every application out of kube-system. A negated server or name
// also refuses a destination that does not give one, since it might be
// the cluster named: pass both server and name once the cluster is known.
//
// The cluster's Secret may scope it to a project (its project key): then
// it serves that project's applications only, and with
// permitOnlyProjectScopedClusters a project deploys only to the clusters
// scoped to it (ClusterAllowed; AppAllowed applies it too).
//
// # Kinds
//
// Cluster-scoped kinds need an entry in clusterResourceWhitelist (empty
// allows none) and none in clusterResourceBlacklist. Namespaced kinds need
// no entry in namespaceResourceBlacklist and, when
// namespaceResourceWhitelist is set, an entry in it; unset allows every
// kind, while set to [] allows none. Group "" is the core group.
// ResourceAllowed checks one manifest: its kind, and for a namespaced
// resource its namespace against the destinations.
//
// # Source namespaces
//
// Applications in graphcd's own namespace may always use a project; in
// other namespaces only when sourceNamespaces matches, with a glob or a
// regular expression between slashes, which as in Argo CD matches
// anywhere in the name unless anchored with ^ and $.
//
// # Sync windows
//
// A window applies to an application when its applications (the app's
// name; a pattern with "/" matches "<app namespace>/<app name>"),
// clusters (the destination's server or name) or namespaces (the
// destination namespace) match — any of the lists given, or all of them
// with andOperator. It opens at each start of its cron schedule (five
// fields or a descriptor such as @daily; not @every) and stays open for
// its duration ("1h", "90m"), on the wall clock of its timeZone (an IANA
// name, UTC when empty): a start s opens the window while the clock reads
// s <= clock < s+duration. On the nights clocks change, a start in the
// skipped hour opens the window when the clock jumps past it, and a window
// in the repeated hour is open in both passes.
//
// With no window applying, syncs are allowed. An open deny window blocks
// syncs, even when an allow window is open too, unless the sync is manual
// and every open deny window has manualSync. Otherwise an open allow
// window allows syncs; and if allow windows apply but all are closed,
// syncs are blocked unless the sync is manual and one of them has
// manualSync. The refusal names the window by its index in syncWindows
// (Argo CD's window ID), its schedule and description, and says when it
// closes or, for allow windows, when the next one opens. Evaluating
// windows costs well under a microsecond per window while none opens or
// closes: each window remembers its last start.
//
// # Destination service accounts
//
// When sync impersonation is on (application.sync.impersonation.enabled),
// a sync runs as the service account of the first
// destinationServiceAccounts entry whose server and namespace globs match
// the destination (an empty namespace pattern matches only cluster-scoped
// destinations), as in Argo CD; no match refuses the sync. An account
// written without "namespace:" lives in the destination namespace, or in
// the Application's namespace when the destination has none. Entries with
// "!", an account that is not a valid Kubernetes name, and a second entry
// for the same server and namespace make the project invalid.
//
// # Orphaned resources, signature keys and the default project
//
// Setting orphanedResources turns reporting on; warn defaults to true.
// An ignore entry matches by group glob ("" is the core group) and by kind
// and name globs, empty matching any. KnownOrphanExclusion lists what
// Kubernetes creates in every namespace. SignatureKeys gives the 16-hex
// upper-case key IDs (a 40-hex fingerprint counts by its last 16 digits)
// one of which must have signed a commit before it is synced.
// DefaultProject is the project created when none exists: any repository,
// destination and kind.
//
// # Where graphcd differs from Argo CD
//
// Argo CD's code lets an entry with "!" also allow everything it does not
// deny, so sourceRepos ['!x'] alone allows every other repository. Its
// documentation says an entry without "!" must allow, and so does graphcd:
// add '*' (or {server: '*', namespace: '*'}) next to the negations.
// Patterns Argo CD's glob library accepts by mistake, such as an
// unterminated "{", are errors here, and a few of its matching bugs
// ("a/**/b" matching "a/b", "?" matching nothing) are not repeated.
package project
