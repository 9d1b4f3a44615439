package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// External Secrets (external-secrets.io) reports a Ready condition on every
// kind; Sealed Secrets (bitnami.com) a Synced condition.

// clusterExternalSecretHealth: besides Ready, a ClusterExternalSecret may
// report PartiallyReady or NotReady when some namespaces failed; either is
// Degraded.
func clusterExternalSecretHealth(u *unstructured.Unstructured) Result {
	for _, typ := range []string{"NotReady", "PartiallyReady"} {
		if c, ok := conditionTrue(u.Object, typ); ok {
			return Result{Status: StatusDegraded, Message: c.text()}
		}
	}
	return readyCondition(u)
}

// sealedSecretHealth: the controller sets Synced True once it has
// unsealed the Secret, False (with the error) when it cannot.
var sealedSecretHealth = readiness{ready: "Synced"}.check
