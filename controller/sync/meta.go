package sync

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// identify reads the identity of obj into a Task (type, namespace, name,
// generateName) and reports fields that are missing or not strings,
// which GetName and friends would silently read as empty.
func identify(obj *unstructured.Unstructured) (Task, []error) {
	var errs []error
	malformed := false
	str := func(field string, path ...string) string {
		v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if err != nil || !found || v == nil {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", field, err))
			}
			return ""
		}
		s, ok := v.(string)
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not a string", field))
			malformed = true
		}
		return s
	}
	apiVersion := str("apiVersion", "apiVersion")
	kind := str("kind", "kind")
	t := Task{
		Kind:         kind,
		Namespace:    str("metadata.namespace", "metadata", "namespace"),
		Name:         str("metadata.name", "metadata", "name"),
		GenerateName: str("metadata.generateName", "metadata", "generateName"),
	}
	if gv, err := schema.ParseGroupVersion(apiVersion); err == nil {
		t.Group, t.Version = gv.Group, gv.Version
	} else {
		errs = append(errs, fmt.Errorf("apiVersion %q: %w", apiVersion, err))
	}
	if apiVersion == "" {
		errs = append(errs, fmt.Errorf("apiVersion is missing"))
	}
	if kind == "" {
		errs = append(errs, fmt.Errorf("kind is missing"))
	}
	if t.Name == "" && t.GenerateName == "" && !malformed {
		errs = append(errs, fmt.Errorf("metadata.name is missing"))
	}
	return t, errs
}
