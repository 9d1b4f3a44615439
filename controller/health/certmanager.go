package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// cert-manager (cert-manager.io, acme.cert-manager.io), as its API
// reference documents the status of each kind.

// certificateHealth: Issuing True means a certificate is being issued
// (Progressing); Issuing False with reason Failed means the last issuance
// failed and cert-manager backs off (Degraded); otherwise Ready decides.
func certificateHealth(u *unstructured.Unstructured) Result {
	if c, ok := findCondition(u.Object, "Issuing"); ok {
		switch {
		case c.Status == "True":
			return Result{Status: StatusProgressing, Message: c.text()}
		case c.Status == "False" && c.Reason == "Failed":
			return Result{Status: StatusDegraded, Message: c.text()}
		}
	}
	return readyCondition(u)
}

// certificateRequestHealth: Denied or InvalidRequest True end the request
// (Degraded); Ready False with reason Pending is still waiting on the
// issuer or on approval.
func certificateRequestHealth(u *unstructured.Unstructured) Result {
	for _, typ := range []string{"Denied", "InvalidRequest"} {
		if c, ok := conditionTrue(u.Object, typ); ok {
			return Result{Status: StatusDegraded, Message: c.text()}
		}
	}
	return certificateRequestReady(u)
}

var certificateRequestReady = readiness{progressReasons: []string{"Pending"}}.check

// acmeStateHealth reads status.state of an ACME Order or Challenge, the
// states of RFC 8555: valid is done; invalid, expired and errored are
// final failures; pending, ready and processing are on the way.
var acmeStateHealth = phaseRule{
	path:     []string{"status", "state"},
	message:  []string{"status", "reason"},
	healthy:  []string{"valid"},
	degraded: []string{"invalid", "expired", "errored"},
}.check
