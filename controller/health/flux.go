package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Flux (*.toolkit.fluxcd.io) reports kstatus conditions on every kind it
// reconciles: Ready, Reconciling, Stalled, and spec.suspend to stop
// reconciling.

var fluxHealth = readiness{suspend: []string{"spec", "suspend"}}.check

// fluxStaticHealth is for the objects Flux documents as static, with no
// conditions to wait for: notification's Alert and Provider since v1beta3,
// and a HelmRepository of spec.type oci. Such an object is Healthy unless
// suspended; one that still reports Ready (an older API version) is read
// by it.
func fluxStaticHealth(u *unstructured.Unstructured) Result {
	if boolField(u.Object, "spec", "suspend") || rawCondition(u.Object, "Ready") != nil {
		return fluxHealth(u)
	}
	return Result{Status: StatusHealthy}
}

// helmRepositoryHealth: an OCI HelmRepository is static, any other is
// reconciled.
func helmRepositoryHealth(u *unstructured.Unstructured) Result {
	if stringField(u.Object, "spec", "type") == "oci" {
		return fluxStaticHealth(u)
	}
	return fluxHealth(u)
}
