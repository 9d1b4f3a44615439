// Package deploy holds graphcd's install manifests, as kustomizations:
//
//	crds/               the CustomResourceDefinitions (from config/crd)
//	install/            graphcd server in one process, cluster-wide
//	ha/                 the roles split: API, sharded controllers,
//	                    mutual-TLS repo-servers, Redis
//	namespace-install/  one process managing only its own namespace
//	components/         the image tag; application-namespaces, the API
//	                    server's rights for apps in any namespace
//
// It has no Go code; its tests build each kustomization with the
// kustomize library, apply it to a local cluster and check that every
// workload becomes ready, under the restricted Pod Security profile and
// with the rights each ServiceAccount needs: they run graphcd's roles as
// their ServiceAccounts through a login, a subscription, a sync and a
// webhook, and see each refused what its role must not do.
// docs/install.md is the user's guide.
package deploy
