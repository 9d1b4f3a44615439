package cache

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tracking methods (settings key application.resourceTrackingMethod).
const (
	TrackingLabel              = "label"
	TrackingAnnotation         = "annotation"
	TrackingAnnotationAndLabel = "annotation+label"
)

// Tracking annotation keys. graphcd writes its own and reads both, so
// objects deployed by Argo CD keep their owner after a move.
const (
	TrackingIDAnnotation     = "graphcd.io/tracking-id"
	ArgoTrackingIDAnnotation = "argocd.argoproj.io/tracking-id"
	DefaultInstanceLabelKey  = "app.kubernetes.io/instance"
)

// Tracking decides which application an object belongs to.
// The zero value tracks by the default instance label.
type Tracking struct {
	// Method is label (default), annotation or annotation+label.
	Method string
	// LabelKey is the instance label (default app.kubernetes.io/instance).
	LabelKey string
}

// AppOf returns the application that owns obj with the default tracking
// (the app.kubernetes.io/instance label), or "" when none does. Caches
// configured otherwise answer through Cluster.AppOf.
func AppOf(obj metav1.Object, gk schema.GroupKind) string {
	return Tracking{}.AppOf(obj, gk)
}

// AppOf returns the application that owns obj, or "". With label tracking
// the label value is the application name. With annotation tracking the
// tracking id `<app>:<group>/<kind>:<namespace>/<name>` must name obj
// itself; an id copied onto another object (say by a controller that copies
// annotations) is ignored.
func (t Tracking) AppOf(obj metav1.Object, gk schema.GroupKind) string {
	switch t.Method {
	case TrackingAnnotation, TrackingAnnotationAndLabel:
		ann := obj.GetAnnotations()
		for _, k := range []string{TrackingIDAnnotation, ArgoTrackingIDAnnotation} {
			if id, ok := ann[k]; ok {
				if app, ok := parseTrackingID(id, obj, gk); ok {
					return app
				}
			}
		}
		return ""
	default:
		key := t.LabelKey
		if key == "" {
			key = DefaultInstanceLabelKey
		}
		return obj.GetLabels()[key]
	}
}

// TrackingID is the annotation value that marks an object as owned by app.
func TrackingID(app string, gk schema.GroupKind, namespace, name string) string {
	return app + ":" + gk.Group + "/" + gk.Kind + ":" + namespace + "/" + name
}

// parseTrackingID returns the app of id when id names obj.
func parseTrackingID(id string, obj metav1.Object, gk schema.GroupKind) (string, bool) {
	app, rest, ok := strings.Cut(id, ":")
	if !ok || app == "" {
		return "", false
	}
	groupKind, nsName, ok := strings.Cut(rest, ":")
	if !ok {
		return "", false
	}
	group, kind, ok := strings.Cut(groupKind, "/")
	if !ok {
		return "", false
	}
	ns, name, ok := strings.Cut(nsName, "/")
	if !ok {
		return "", false
	}
	if group != gk.Group || kind != gk.Kind || name != obj.GetName() {
		return "", false
	}
	// Argo CD writes an empty namespace for cluster-scoped objects and
	// sometimes for objects whose manifest left it to the destination.
	if ns != obj.GetNamespace() && ns != "" {
		return "", false
	}
	return app, true
}
