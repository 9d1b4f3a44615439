// Package kustomize renders Kustomize applications in-process with
// sigs.k8s.io/kustomize/api (krusty), the way Argo CD's kustomize source
// renders them, without running the kustomize binary and without changing
// the checkout.
//
// Argo CD applies an Application's spec.source.kustomize overrides by
// running `kustomize edit` in the app directory and then `kustomize build`.
// Render applies the same edits to an in-memory copy of the app's
// kustomization file instead, so the overrides mean exactly what they mean
// in Argo CD:
//
//	source:
//	  path: apps/web/overlays/prod
//	  kustomize:
//	    namePrefix: prod-              # replaces the kustomization's namePrefix
//	    nameSuffix: -v2
//	    namespace: web                 # replaces the kustomization's namespace
//	    images:                        # merged by name into images:
//	    - nginx=registry.example.com/nginx:1.27   # name=newName:tag
//	    - redis:7.2                                # name:tag
//	    - app@sha256:...                           # name@digest
//	    - busybox=alpine                           # name=newName
//	    replicas: [{name: web, count: 3}]
//	    commonLabels: {team: a}        # an existing key is an error unless forceCommonLabels
//	    commonAnnotations: {owner: a}  # same, with forceCommonAnnotations
//	    labelWithoutSelector: true     # labels without touching selectors
//	    components: [../../components/monitoring]
//	    patches:
//	    - target: {kind: Deployment, name: web}
//	      patch: |-
//	        - op: replace
//	          path: /spec/template/spec/containers/0/name
//	          value: main
//
// # Safety
//
// kustomize reads through a file system that serves the checkout lazily
// and read-only, under the virtual root /repo, so kustomize never learns
// the real path. Every path, symlinks included, must resolve inside the
// repository (render.ResolveInRoot); anything else fails with an error
// wrapping render.ErrOutsideRoot. Within the repository any file may be
// used, as with kustomize's LoadRestrictionsNone: the repository, not the
// kustomization directory, is the boundary.
//
// Remote bases (resources, bases and components at a Git URL) and
// resources at an http(s) URL are fetched by the caller, never by
// kustomize: Scan finds them in a checkout, the repository server
// fetches them through its own Git layer and egress rules, and the
// request carries them (render.Request.RemoteBases, FetchedFiles). Each
// base is served at /remote/N, confined to its own repository's copy,
// and a kustomization naming it sees a relative path there instead.
//
// Before kustomize sees a kustomization (or a builtin generator or
// transformer configuration), its references are checked: a remote
// reference the caller did not fetch (and any URL in other fields:
// patches, generators, crds) fails with ErrRemote, since kustomize would
// clone or download it itself. helmCharts inflate only with
// --enable-helm in the build options: graphcd renders each chart with
// its own Helm renderer (package helm) from the kustomization's chart
// home or from a chart the caller pulled (render.Request.HelmCharts), and
// the kustomization sees the output as one more resource; otherwise, and
// for HelmChartInflationGenerator configurations, they fail with
// ErrHelmUnsupported, since kustomize would run the helm binary. Exec, Go
// and KRM-function plugins are disabled, and so are build options that
// would enable them. Reads are bounded (one file, and all reads of a
// render, by multiples of render.Limits), the output is decoded with
// render.Decode under req.Limits, panics in kustomize become errors, and
// the render stops reading once its context is done.
//
// kustomize keeps its OpenAPI schema in process-wide state; renders share
// it, except one whose kustomization sets its own `openapi`, which runs
// alone and restores the default afterwards.
package kustomize
