// Package reposerver will clone Git repositories, resolve revisions and
// render manifests (plain YAML, Jsonnet, Helm, Kustomize, plugins) with a
// manifest cache. It knows nothing of GraphQL or controllers. The package is
// empty until the Repository server issue lands.
package reposerver
