// Package manifests renders an application's source as its AppProject
// allows. It is the one path by which the application controller (to
// compare, sync and run deletion hooks) and the API (Application.manifests)
// get manifests from the repository server, so the two apply the same
// rules and cannot drift apart.
//
// Render applies, in order:
//
//  1. the project exists (a missing project permits nothing) and is
//     valid (*project.InvalidError otherwise);
//  2. the project permits the source's repository (*project.DeniedError
//     otherwise, in Argo CD's words);
//  3. the repository's credentials, from the repository Secrets that
//     serve the project: its own project-scoped Secret, else a global one,
//     never another project's (repocreds.Store.Lookup);
//  4. the project's signatureKeys: their public keys are read from
//     ConfigMap graphcd-gpg-keys-cm in the project's namespace and handed
//     to the repository server, which renders nothing from a commit none
//     of them signed (SignatureRefused reports that refusal).
//
// A project that requires signed commits:
//
//	apiVersion: graphcd.io/v1alpha1
//	kind: AppProject
//	metadata: {name: signed-only, namespace: graphcd}
//	spec:
//	  sourceRepos: ['*']
//	  destinations: [{server: '*', namespace: '*'}]
//	  signatureKeys:
//	  - keyID: 4AEE18F83AFDEB23
//	---
//	apiVersion: v1
//	kind: ConfigMap
//	metadata: {name: graphcd-gpg-keys-cm, namespace: graphcd}
//	data:
//	  4AEE18F83AFDEB23: |
//	    -----BEGIN PGP PUBLIC KEY BLOCK-----
//	    ...
//
// Use:
//
//	r := &manifests.Renderer{Repo: svc, Credentials: store.Lookup, Keys: apiReader}
//	res, err := r.Render(ctx, manifests.Request{App: app, Project: proj, Source: *app.Spec.Source})
//	if manifests.SignatureRefused(err) {
//		// the project refuses the commit; rendering again will not help
//	}
//
// RenderApp renders every source of an application the same way for
// both callers: the sources with a ref ($ref/path value files) are
// resolved to one commit first and handed to the others, which render
// concurrently; a failure names its source (*SourceError).
//
// The package sits under controller/ because these are the controller's
// rules, next to controller/project that holds them. It imports only the
// API types, controller/project, the repository server's Service contract
// and a Kubernetes reader, and neither the controller nor the resolvers, so
// both import it without a layer pointing upward (the resolvers import
// controller/project the same way).
package manifests
