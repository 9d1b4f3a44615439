package cache

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/internal/settings"
)

// TrackingIDAnnotation is the annotation that names an object's
// application under annotation tracking. It is Argo CD's key, so objects
// Argo CD deployed keep their owner after a move and show no difference.
const TrackingIDAnnotation = "argocd.argoproj.io/tracking-id"

// maxLabelValue is the longest value a Kubernetes label may have.
const maxLabelValue = 63

// Tracking decides which application an object belongs to, and marks
// desired objects so that they do. The zero value tracks as Argo CD 3 does
// by default: by the tracking-id annotation.
type Tracking struct {
	// Method is annotation (the default), annotation+label or label.
	Method string
	// LabelKey is the instance label (default app.kubernetes.io/instance).
	LabelKey string
}

func (t Tracking) method() string {
	if t.Method == "" {
		return settings.DefaultTrackingMethod
	}
	return t.Method
}

func (t Tracking) labelKey() string {
	if t.LabelKey == "" {
		return settings.DefaultInstanceLabelKey
	}
	return t.LabelKey
}

// AppOf returns the application that owns obj, or "". With label tracking
// the label value is the application name. With annotation tracking (and
// annotation+label, whose label only informs other tools) the tracking id
// `<app>:<group>/<kind>:<namespace>/<name>` must name obj itself; an id
// copied onto another object (say by a controller that copies annotations)
// is ignored.
func (t Tracking) AppOf(obj metav1.Object, gk schema.GroupKind) string {
	if t.method() == settings.TrackingLabel {
		return obj.GetLabels()[t.labelKey()]
	}
	if id, ok := obj.GetAnnotations()[TrackingIDAnnotation]; ok {
		if app, ok := parseTrackingID(id, obj, gk); ok {
			return app
		}
	}
	return ""
}

// Mark writes what makes obj, of kind gk, app's under t: the instance label,
// the tracking-id annotation, or both. The id carries obj's namespace, or
// defaultNamespace (the app's destination namespace) when obj has none, as
// Argo CD writes it, so ids Argo CD wrote match to the byte. Under
// annotation+label the label is cut to 63 characters, as Argo CD cuts it:
// it only informs other tools. Other labels and annotations stay as they
// are, values that are not strings included (the sync reports those).
func (t Tracking) Mark(obj metav1.Object, gk schema.GroupKind, app, defaultNamespace string) {
	m := t.method()
	if m == settings.TrackingLabel || m == settings.TrackingAnnotationAndLabel {
		v := app
		if m == settings.TrackingAnnotationAndLabel && len(v) > maxLabelValue {
			v = strings.TrimRight(v[:maxLabelValue], "-_.")
		}
		setMeta(obj, "labels", t.labelKey(), v)
	}
	if m == settings.TrackingAnnotation || m == settings.TrackingAnnotationAndLabel {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = defaultNamespace
		}
		setMeta(obj, "annotations", TrackingIDAnnotation, TrackingID(app, gk, ns, obj.GetName()))
	}
}

// setMeta sets key to value in obj's metadata.labels or
// metadata.annotations. An unstructured object's map is written in place:
// GetAnnotations would return nothing at all for a map holding one value
// that is not a string, and SetAnnotations would then drop the others.
func setMeta(obj metav1.Object, field, key, value string) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		meta, _ := u.Object["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			u.Object["metadata"] = meta
		}
		m, ok := meta[field].(map[string]any)
		switch {
		case !ok && meta[field] != nil:
			return // not a map: the API server refuses the object, saying why
		case m == nil:
			m = map[string]any{}
			meta[field] = m
		}
		m[key] = value
		return
	}
	get, set := obj.GetAnnotations, obj.SetAnnotations
	if field == "labels" {
		get, set = obj.GetLabels, obj.SetLabels
	}
	m := get()
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	set(m)
}

// TrackingID is the annotation value that marks an object as owned by app.
func TrackingID(app string, gk schema.GroupKind, namespace, name string) string {
	return app + ":" + gk.Group + "/" + gk.Kind + ":" + namespace + "/" + name
}

// parseTrackingID returns the app of id when id names obj. A cluster-scoped
// object matches whatever namespace its id carries: Argo CD writes the
// app's destination namespace there.
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
	if obj.GetNamespace() != "" && ns != obj.GetNamespace() {
		return "", false
	}
	return app, true
}

// instanceSeparator joins an app's namespace and name in its instance
// name. Kubernetes names never hold it, so the split is unambiguous.
const instanceSeparator = "_"

// InstanceName is the name that tracks app's objects (the instance label
// value and the app part of the tracking id): the app's name when it
// lives in graphcd's namespace own (or own is "", one namespace serving
// alone), "<namespace>_<name>" elsewhere, as Argo CD names applications
// in any namespace. Objects of two apps of one name in two namespaces
// thus never mix.
func InstanceName(namespace, name, own string) string {
	if own == "" || namespace == own || namespace == "" {
		return name
	}
	return namespace + instanceSeparator + name
}

// AppOfInstance is InstanceName's inverse: the namespace and name of the
// app an instance name tracks, the namespace own for a plain name.
func AppOfInstance(instance, own string) (namespace, name string) {
	if ns, n, ok := strings.Cut(instance, instanceSeparator); ok && ns != "" && n != "" {
		return ns, n
	}
	return own, instance
}
