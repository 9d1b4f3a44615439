package v1alpha1

import "strconv"

// Finalizers that make deleting an Application delete its resources first
// (a cascading delete); the controller removes them once the resources
// are gone. Argo CD's name means foreground propagation, its "/background"
// variant background propagation; graphcd's own name is an alias of Argo
// CD's. The API writes them, the controller acts on them.
const (
	ResourcesFinalizer               = "resources-finalizer.graphcd.io"
	ArgoResourcesFinalizer           = "resources-finalizer.argocd.argoproj.io"
	ArgoResourcesFinalizerBackground = "resources-finalizer.argocd.argoproj.io/background"
)

// Annotations that ask the controller to compare an Application again now,
// graphcd's and Argo CD's; the controller removes them once served. Their
// value is RefreshNormal or RefreshHard.
const (
	RefreshAnnotation     = "graphcd.io/refresh"
	ArgoRefreshAnnotation = "argocd.argoproj.io/refresh"
	// RefreshRequestedAnnotation holds when the last refresh was asked
	// for (RFC 3339): a refresh asked while the annotation is already set
	// still changes the Application, so that the controller, which
	// removes the annotations only if the Application did not change
	// since it read them, compares it once more.
	RefreshRequestedAnnotation = "graphcd.io/refresh-requested"
)

// Values of the refresh annotations.
const (
	// RefreshNormal compares again with the cached manifests of the
	// revision.
	RefreshNormal = "normal"
	// RefreshHard renders the manifests again first.
	RefreshHard = "hard"
)

// SkipReconcileAnnotation stops all processing of an Application while its
// value parses as true (strconv.ParseBool), as Argo CD's: no comparison,
// operation, status write or deletion. Removing it, or "false", resumes.
const SkipReconcileAnnotation = "argocd.argoproj.io/skip-reconcile"

// SkipsReconcile reports whether a's annotations stop its processing
// (SkipReconcileAnnotation).
func SkipsReconcile(a *Application) bool {
	skip, err := strconv.ParseBool(a.Annotations[SkipReconcileAnnotation])
	return err == nil && skip
}

// SyncApprovalsAnnotation holds the approvals given to an Application's
// held sync, as a JSON list of SyncApprovalRecord. Only graphcd's API
// writes it (its other mutations keep it as it is); the controller counts
// the records that name the held operation and drops the annotation when
// the operation ends.
const SyncApprovalsAnnotation = "sync-approvals.graphcd.io"
