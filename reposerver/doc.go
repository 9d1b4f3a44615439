// Package reposerver is the contract of graphcd's repository server: the
// Service interface that turns an application source into Kubernetes
// manifests and answers questions about repositories, and the types it
// speaks (Repository, ManifestRequest, ManifestResponse, AppDetails).
//
// The controller and the API depend on this package only, so they link
// neither the renderers nor the gRPC transport. Two packages implement
// Service: reposerver/inproc renders in the calling process (and its
// render-worker children), reposerver/remote talks to a `graphcd
// repo-server` over gRPC:
//
//	svc, err := inproc.New(inproc.Options{WorkDir: dir, Cache: c})
//	res, err := svc.GenerateManifests(ctx, reposerver.ManifestRequest{
//		Repo:   reposerver.Repository{URL: "https://github.com/org/apps"},
//		Source: app.Spec.Source,
//		AppName: app.Name, Namespace: app.Spec.Destination.Namespace,
//	})
//
// Besides rendering, a Service resolves revisions, lists refs, tests
// repositories, reports a source's tool and options (GetAppDetails), and
// lists a revision's latest commits (author, date, message, tags;
// bounded) for histories and revision pickers. Helm repositories have no
// commits: ListCommits refuses them with ErrNotGit.
//
// The package knows nothing of GraphQL or controllers.
package reposerver
