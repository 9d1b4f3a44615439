// Package reposerver turns an application source into Kubernetes manifests:
// it resolves the target revision, checks the repository out (Git) or pulls
// the chart (Helm repository, OCI registry), detects the tool, renders in
// process (directory and Jsonnet, Helm, Kustomize, config-management
// plugins) and caches the result keyed by everything that determines it.
//
// The controller and the API use the Service interface; Local implements it
// in the calling process:
//
//	svc, err := reposerver.NewLocal(reposerver.Options{WorkDir: dir, Cache: c})
//	res, err := svc.GenerateManifests(ctx, reposerver.ManifestRequest{
//		Repo:   reposerver.Repository{URL: "https://github.com/org/apps"},
//		Source: app.Spec.Source,
//		AppName: app.Name, Namespace: app.Spec.Destination.Namespace,
//	})
//
// It also answers questions about repositories without rendering:
// ResolveRevision, ListRefs, TestRepository, GetAppDetails, and
// ListCommits, which lists a revision's latest commits (author, date,
// message, tags; bounded) for histories and revision pickers. Helm
// repositories have no commits: ListCommits refuses them with ErrNotGit.
//
// The package knows nothing of GraphQL or controllers.
package reposerver
