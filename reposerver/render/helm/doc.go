// Package helm renders Helm charts in-process with the Helm v3 SDK, the
// way `helm template` does when Argo CD runs it, and pulls charts from
// Helm HTTP repositories and OCI registries.
//
// A chart in a Git checkout:
//
//	objs, err := helm.Render(ctx, render.Request{
//		RepoRoot:  "/cache/checkouts/abc123",
//		Path:      "deploy/chart",
//		Source:    app.Spec.Source, // helm.valueFiles, values, parameters, ...
//		AppName:   "guestbook",
//		Namespace: "guestbook",
//	}, helm.ChartSource{Dependencies: helm.Dependencies{CacheDir: "/cache/charts"}})
//
// A chart from a repository (an Application with source.chart):
//
//	dir, err := helm.Pull(ctx, helm.PullRequest{
//		RepoURL:  "https://charts.example.com", // or oci://registry.example.com/charts
//		Chart:    "redis",
//		Version:  "^18.0", // targetRevision: exact version or semver range
//		CacheDir: "/cache/charts",
//	})
//	objs, err := helm.Render(ctx, req, helm.ChartSource{Dir: dir})
//
// Options follow Argo CD's spec.source.helm: valueFiles (relative to the
// application path), values / valuesObject, parameters (--set, or
// --set-string with forceString), fileParameters (--set-file),
// releaseName (default: the application name), namespace (default: the
// destination namespace), kubeVersion and apiVersions (default: the
// request's), skipCrds, skipTests and skipSchemaValidation. Values merge
// as Helm merges them: valueFiles in order, then values/valuesObject,
// then parameters, forceString parameters and fileParameters.
//
// Everything a repository holds is treated as hostile: value files, file
// parameters, file:// dependencies and the chart's own files (symlinks
// included) are read only inside the checkout, failing with
// render.ErrOutsideRoot otherwise; downloads and unpacked charts are
// size-bounded (ErrDownloadTooLarge); Helm runs in a goroutine under
// recover() and Render returns when ctx is done.
//
// Not supported yet: $ref value files of multi-source applications,
// remote (http) value files, repository aliases ("@name") in Chart.yaml
// dependencies, and Argo CD's environment substitution ($ARGOCD_APP_NAME)
// in value file paths and parameters.
package helm
