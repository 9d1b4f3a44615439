// Package scm runs the ApplicationSet generators that ask a forge: the
// scmProvider generator (one parameter set per repository, or per
// branch) and the pullRequest generator (one per open pull request), as
// Argo CD runs them, against Gitea, GitHub, GitLab, Bitbucket Server and
// Bitbucket Cloud.
//
// The CRD keeps both generators schemaless, so the package decodes
// their JSON itself:
//
//	generators:
//	- scmProvider:
//	    cloneProtocol: https
//	    gitea:
//	      owner: platform
//	      api: https://gitea.example.com
//	      tokenRef: {secretName: gitea-token, key: token}
//	      allBranches: true
//	    filters:
//	    - repositoryMatch: ^svc-
//	      pathsExist: [deploy/kustomization.yaml]
//	    - labelMatch: deploy
//
//	res, err := scm.SCMProvider(ctx, gen.SCMProvider.Raw, set.Spec.GoTemplate, readSecret, opts)
//
// The spec is a tenant's, so every request is bounded and every answer
// distrusted: each response is read within a byte budget, a listing has
// at most Options.MaxPages pages and Options.MaxResults items, a run at
// most Options.MaxRequests requests (over a bound is an error, never a
// silent cut); a next-page link must stay on the API's scheme and host;
// a redirect drops the Authorization header when it leaves the host or
// https; the API URL must be http or https; errors name URLs without
// their query and never quote the credential.
package scm
