// Package wellknown declares, once, the names graphcd shares with its
// users and with Argo CD: the settings ConfigMaps, graphcd's Secret and the
// labels that mark repository and cluster Secrets. It imports nothing, so
// every layer may use it.
package wellknown

// The ConfigMaps and the Secret in graphcd's namespace, as Argo CD's
// argocd-cm, argocd-rbac-cm and argocd-secret.
const (
	// SettingsConfigMap holds the settings (Argo CD's argocd-cm keys).
	SettingsConfigMap = "graphcd-cm"
	// RBACConfigMap holds the RBAC policy (argocd-rbac-cm's keys).
	RBACConfigMap = "graphcd-rbac-cm"
	// Secret holds what graphcd writes for itself (session keys, password
	// hashes, the server certificate) and what users reference from the
	// settings (SSO client secrets, webhook secrets).
	Secret = "graphcd-secret" //nolint:gosec // G101: a Secret's name, not a credential
)

// The labels that declare a Secret a repository, a credential template or
// a cluster: graphcd's, and Argo CD's, which graphcd reads as well.
//
//nolint:gosec // G101: label names, not credentials
const (
	SecretTypeLabel     = "graphcd.io/secret-type"
	ArgoSecretTypeLabel = "argocd.argoproj.io/secret-type"
)
