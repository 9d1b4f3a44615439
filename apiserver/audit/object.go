package audit

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
)

// objectOf names obj, one of the kinds graphcd's API writes: its own
// kinds and Secrets in the management cluster, and as unstructured
// objects the live resources of destination clusters.
func objectOf(obj any) (Object, bool) {
	switch o := obj.(type) {
	case *v1alpha1.Application:
		if o == nil {
			return Object{}, false
		}
		return Object{Kind: "Application", Group: v1alpha1.GroupVersion.Group, Namespace: o.Namespace, Name: o.Name, Project: o.ProjectName(), UID: string(o.UID)}, true
	case *v1alpha1.AppProject:
		if o == nil {
			return Object{}, false
		}
		return Object{Kind: "AppProject", Group: v1alpha1.GroupVersion.Group, Namespace: o.Namespace, Name: o.Name, Project: o.Name, UID: string(o.UID)}, true
	case *v1alpha1.ApplicationSet:
		if o == nil {
			return Object{}, false
		}
		return Object{Kind: "ApplicationSet", Group: v1alpha1.GroupVersion.Group, Namespace: o.Namespace, Name: o.Name, Project: o.ProjectName(), UID: string(o.UID)}, true
	case *corev1.Secret:
		if o == nil {
			return Object{}, false
		}
		return Object{Kind: "Secret", Namespace: o.Namespace, Name: o.Name, Project: secretcodec.Project(o), UID: string(o.UID)}, true
	case *unstructured.Unstructured:
		if o == nil {
			return Object{}, false
		}
		gvk := o.GroupVersionKind()
		return Object{Kind: gvk.Kind, Group: gvk.Group, Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()), Live: true}, true
	}
	return Object{}, false
}

func isNil(obj any) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
