package migration

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// lastApplied is kubectl's annotation with the whole object as applied;
// it is not carried (for a Secret it holds the data).
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Options say where the converted objects go.
type Options struct {
	// Namespace is graphcd's namespace.
	Namespace string
	// ConfigMaps and Secrets map Argo CD's names (argocd-cm ...) to
	// graphcd's; an Argo CD ConfigMap or Secret missing here is not
	// carried.
	ConfigMaps, Secrets map[string]string
}

// Convert returns graphcd's objects for src, in the order they are to be
// written, and the report. It fails only on a bad Options; an object
// graphcd cannot read is reported and left out.
func Convert(src *Source, o Options) ([]*unstructured.Unstructured, *Report, error) {
	if o.Namespace == "" {
		return nil, nil, fmt.Errorf("no graphcd namespace")
	}
	c := &converter{src: src, opts: o, report: &Report{Source: src.Namespace, Target: o.Namespace}}
	for _, w := range src.Controllers {
		c.report.Warnings = append(c.report.Warnings, fmt.Sprintf(
			"Argo CD's application controller still runs (%s %s/%s, %d replicas): scale it to 0 before --apply, or both controllers sync and self-heal the same resources: kubectl scale %s %s -n %s --replicas=0",
			w.Kind, src.Namespace, w.Name, w.Replicas, strings.ToLower(w.Kind), w.Name, src.Namespace))
	}
	c.settings()
	c.secrets()
	for _, p := range src.Projects {
		c.project(p)
	}
	for _, a := range src.Applications {
		c.application(a)
	}
	for _, s := range src.ApplicationSets {
		c.applicationSet(s)
	}
	return c.out, c.report, nil
}

type converter struct {
	src    *Source
	opts   Options
	report *Report
	out    []*unstructured.Unstructured
}

// add records one object's report and, when obj is not nil, the object.
func (c *converter) add(r *Object, obj *unstructured.Unstructured) {
	if obj != nil {
		r.To = describe(obj)
		c.out = append(c.out, obj)
	}
	c.report.Objects = append(c.report.Objects, *r)
}

// describe names an object in a report: "Kind namespace/name".
func describe(obj *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

// newObject starts graphcd's object for an Argo CD one: its kind in
// graphcd's group, name, labels, annotations and finalizers.
func newObject(from *unstructured.Unstructured, apiVersion, namespace, name string, r *Object) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(apiVersion)
	obj.SetKind(from.GetKind())
	obj.SetNamespace(namespace)
	obj.SetName(name)
	if l := from.GetLabels(); len(l) > 0 {
		obj.SetLabels(l)
	}
	annotations := from.GetAnnotations()
	delete(annotations, lastApplied)
	if len(annotations) > 0 {
		obj.SetAnnotations(annotations)
	}
	if f := from.GetFinalizers(); len(f) > 0 {
		obj.SetFinalizers(f)
		r.same("finalizers %v (graphcd honours Argo CD's)", f)
	}
	if from.GetAPIVersion() != apiVersion {
		r.change("apiVersion %s -> %s", from.GetAPIVersion(), apiVersion)
	}
	if from.GetNamespace() != namespace {
		r.change("namespace %s -> %s", from.GetNamespace(), namespace)
	}
	if from.GetName() != name {
		r.change("name %s -> %s", from.GetName(), name)
	}
	if len(from.GetOwnerReferences()) > 0 {
		r.change("owner references dropped (their uids name Argo CD's objects)")
	}
	return obj
}

// graphcdVersion is the apiVersion of graphcd's custom resources.
var graphcdVersion = v1alpha1.GroupVersion.String()

// crNamespace is where graphcd's object for an Argo CD one of namespace
// lives: objects of Argo CD's namespace move to graphcd's, those of other
// namespaces (apps in any namespace) stay.
func (c *converter) crNamespace(namespace string) string {
	if namespace == c.src.Namespace {
		return c.opts.Namespace
	}
	return namespace
}

// spec carries from's spec through typed, graphcd's type for it, and
// reports what graphcd does not read. It returns nil when the spec cannot
// be read at all.
func spec(from *unstructured.Unstructured, typed any, r *Object) map[string]any {
	orig, _, _ := unstructured.NestedMap(from.Object, "spec")
	out, dropped, err := roundTrip(orig, typed)
	if err != nil {
		r.unsupported("spec: graphcd cannot read it: %v", err)
		return nil
	}
	for _, path := range dropped {
		r.unsupported("%s: a field graphcd does not know; left out", path)
	}
	if len(dropped) == 0 {
		r.same("spec: every field")
	}
	return out
}

// roundTrip decodes in into typed and encodes it again, returning the
// result and the paths of what it lost that held a value.
func roundTrip(in map[string]any, typed any) (map[string]any, []string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal(b, typed); err != nil {
		return nil, nil, err
	}
	if b, err = json.Marshal(typed); err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, nil, err
	}
	// Compare with in as JSON decodes it (numbers as float64).
	var norm map[string]any
	b, _ = json.Marshal(in)
	_ = json.Unmarshal(b, &norm)
	var dropped []string
	lost("spec", norm, out, &dropped)
	return out, dropped, nil
}

// lost appends the paths below path that in holds with a value and out
// does not.
func lost(path string, in, out any, dropped *[]string) {
	switch v := in.(type) {
	case map[string]any:
		o, _ := out.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if ov, ok := o[k]; ok {
				lost(path+"."+k, v[k], ov, dropped)
			} else if !empty(v[k]) {
				*dropped = append(*dropped, path+"."+k)
			}
		}
	case []any:
		o, _ := out.([]any)
		if len(o) != len(v) {
			return
		}
		for i := range v {
			lost(path+"["+strconv.Itoa(i)+"]", v[i], o[i], dropped)
		}
	}
}

// empty reports whether v is JSON's zero of its type, which omitempty
// drops without loss.
func empty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() == 0
	}
	return rv.IsZero()
}
