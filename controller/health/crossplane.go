package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// Crossplane: packages (pkg.crossplane.io), composition machinery
// (apiextensions.crossplane.io) and the managed resources providers
// define, whatever their group.

// crossplanePackageHealth judges a Provider, Configuration or Function by
// its Installed and Healthy conditions: both True is Healthy, Healthy
// False (the package revision is unhealthy) Degraded, anything else still
// installing.
func crossplanePackageHealth(u *unstructured.Unstructured) Result {
	healthy, hok := findCondition(u.Object, "Healthy")
	installed, iok := findCondition(u.Object, "Installed")
	switch {
	case hok && healthy.Status == "False":
		return Result{Status: StatusDegraded, Message: healthy.text()}
	case hok && iok && healthy.Status == "True" && installed.Status == "True":
		return Result{Status: StatusHealthy, Message: healthy.text()}
	case iok && installed.Status != "True":
		return Result{Status: StatusProgressing, Message: installed.text()}
	case hok:
		return Result{Status: StatusProgressing, Message: healthy.text()}
	}
	return Result{Status: StatusProgressing, Message: "Waiting for the package to be installed"}
}

// xrdHealth: a CompositeResourceDefinition is Healthy once Established
// (Crossplane serves the composite resource) and, when it defines a claim,
// Offered; either False is Degraded.
func xrdHealth(u *unstructured.Unstructured) Result {
	types := []string{"Established"}
	if mapField(u.Object, "spec", "claimNames") != nil {
		types = append(types, "Offered")
	}
	msg := ""
	for _, typ := range types {
		c, ok := findCondition(u.Object, typ)
		switch {
		case !ok:
			return Result{Status: StatusProgressing, Message: "Waiting for the " + typ + " condition"}
		case c.Status == "False":
			return Result{Status: StatusDegraded, Message: c.text()}
		case c.Status != "True":
			return Result{Status: StatusProgressing, Message: c.text()}
		}
		msg = c.text()
	}
	return Result{Status: StatusHealthy, Message: msg}
}

// compositionHealth: a Composition is a template with no status; Crossplane
// validates it when it is written, so existing is all it takes.
func compositionHealth(*unstructured.Unstructured) Result {
	return Result{Status: StatusHealthy}
}

// crossplanePausedAnnotation stops Crossplane reconciling a resource.
const crossplanePausedAnnotation = "crossplane.io/paused"

// crossplaneManagedHealth judges a managed resource of any provider: one
// with spec.forProvider, or reporting Ready or Synced. Paused is
// Suspended; Synced False (the last reconcile failed) Degraded; Ready True
// Healthy, Ready False Progressing while Creating or Deleting and Degraded
// otherwise (Unavailable). Other objects of these groups (a
// ProviderConfig, say) get no verdict.
func crossplaneManagedHealth(u *unstructured.Unstructured) (Result, bool) {
	obj := u.Object
	ready, rok := findCondition(obj, "Ready")
	synced, sok := findCondition(obj, "Synced")
	if !rok && !sok && mapField(obj, "spec", "forProvider") == nil {
		return Result{}, false
	}
	if u.GetAnnotations()[crossplanePausedAnnotation] == "true" {
		return Result{Status: StatusSuspended, Message: "Reconciliation is paused by the " + crossplanePausedAnnotation + " annotation"}, true
	}
	switch {
	case sok && synced.Status == "False":
		return Result{Status: StatusDegraded, Message: synced.text()}, true
	case !rok:
		return Result{Status: StatusProgressing, Message: "Waiting for the Ready condition"}, true
	case ready.Status == "True":
		return Result{Status: StatusHealthy, Message: ready.text()}, true
	case ready.Status == "False" && ready.Reason != "Creating" && ready.Reason != "Deleting":
		return Result{Status: StatusDegraded, Message: ready.text()}, true
	}
	return Result{Status: StatusProgressing, Message: ready.text()}, true
}
