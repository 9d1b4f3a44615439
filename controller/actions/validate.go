package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Bounds on what discovery and actions may return and take.
const (
	maxActions     = 64   // actions one object offers
	maxParams      = 16   // parameters one action declares
	maxParamValue  = 4096 // bytes of one parameter value
	maxLabelLength = 128  // bytes of an iconClass or displayName
	maxChanges     = 16   // objects one run may write
)

// namePattern is what action and parameter names look like: Argo CD's
// built-in names ("create-job", "skip-current-step") and ours fit it.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)

func checkName(what, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%s name %q: want 1-63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit", what, truncate(name))
	}
	return nil
}

func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "..."
}

// discoveredActions reads what a discovery script returned: a table of
// actions by name, each a table (possibly empty) of disabled, iconClass,
// displayName and params.
func discoveredActions(v any, ck *customKind) ([]Action, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: discovery.lua %s", ErrBadResult, fmt.Sprintf(format, args...))
	}
	if v == nil {
		return nil, bad("returned nothing; want a table of actions keyed by name")
	}
	table, err := asTable(v)
	if err != nil {
		return nil, bad("returned %v; want a table of actions keyed by name", err)
	}
	if len(table) > maxActions {
		return nil, bad("returned %d actions, more than %d", len(table), maxActions)
	}
	out := make([]Action, 0, len(table))
	for name, spec := range table {
		if err := checkName("action", name); err != nil {
			return nil, bad("returned an invalid action: %v", err)
		}
		if ck.actions[name] == nil && !hasBuiltin(ck, name) {
			return nil, bad("returned action %q, which has no definition", name)
		}
		a := Action{Name: name}
		fields, err := asTable(spec)
		if err != nil {
			return nil, bad("action %q: want a table of disabled, iconClass, displayName and params, got %v", name, err)
		}
		if a.Disabled, err = optBool(fields, "disabled"); err == nil {
			if a.IconClass, err = optLabel(fields, "iconClass"); err == nil {
				if a.DisplayName, err = optLabel(fields, "displayName"); err == nil {
					a.Params, err = discoveredParams(fields["params"])
				}
			}
		}
		if err != nil {
			return nil, bad("action %q: %v", name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// asTable reads a Lua table with string keys; Lua cannot tell an empty
// one from an empty list.
func asTable(v any) (map[string]any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case []any:
		if len(x) == 0 {
			return nil, nil
		}
		return nil, errors.New("a list")
	default:
		return nil, fmt.Errorf("a %T", v)
	}
}

// hasBuiltin reports whether a kind that merges the built-in actions has
// one of the name; a discovery script may list it without a definition.
func hasBuiltin(ck *customKind, name string) bool {
	return ck.builtin != nil && ck.builtin.run[name] != nil
}

func optBool(m map[string]any, key string) (bool, error) {
	switch v := m[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, fmt.Errorf("%s is a %T, want a boolean", key, v)
	}
}

func optLabel(m map[string]any, key string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		if len(v) > maxLabelLength {
			return "", fmt.Errorf("%s is longer than %d bytes", key, maxLabelLength)
		}
		return v, nil
	default:
		return "", fmt.Errorf("%s is a %T, want a string", key, v)
	}
}

// discoveredParams reads an action's params: a list of {name, type,
// default}.
func discoveredParams(v any) ([]Param, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if m, isMap := v.(map[string]any); isMap && len(m) == 0 {
		return nil, nil
	}
	if !ok {
		return nil, fmt.Errorf("params is a %T, want a list of {name, type, default}", v)
	}
	if len(list) > maxParams {
		return nil, fmt.Errorf("declares %d params, more than %d", len(list), maxParams)
	}
	out := make([]Param, 0, len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("params[%d] is a %T, want a table {name, type, default}", i+1, item)
		}
		name, _ := m["name"].(string)
		if err := checkName("parameter", name); err != nil {
			return nil, fmt.Errorf("params[%d]: %w", i+1, err)
		}
		if slices.ContainsFunc(out, func(p Param) bool { return p.Name == name }) {
			return nil, fmt.Errorf("params[%d]: %q declared twice", i+1, name)
		}
		p := Param{Name: name, Type: ParamString}
		switch t := m["type"].(type) {
		case nil:
		case string:
			if !slices.Contains([]string{ParamString, ParamNumber, ParamInteger, ParamBoolean}, t) {
				return nil, fmt.Errorf("params[%d] (%s): type %q, want string, number, integer or boolean", i+1, name, truncate(t))
			}
			p.Type = t
		default:
			return nil, fmt.Errorf("params[%d] (%s): type is a %T, want a string", i+1, name, t)
		}
		switch d := m["default"].(type) {
		case nil:
		case string:
			p.Default = d
		case bool:
			p.Default = strconv.FormatBool(d)
		case int64:
			p.Default = strconv.FormatInt(d, 10)
		case float64:
			p.Default = strconv.FormatFloat(d, 'g', -1, 64)
		default:
			return nil, fmt.Errorf("params[%d] (%s): default is a %T, want a string, number or boolean", i+1, name, d)
		}
		if len(p.Default) > maxParamValue {
			return nil, fmt.Errorf("params[%d] (%s): default is longer than %d bytes", i+1, name, maxParamValue)
		}
		out = append(out, p)
	}
	return out, nil
}

// checkParams checks the values given for a run against what the action
// declares and fills in defaults.
func checkParams(a Action, given map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(a.Params))
	for name, v := range given {
		i := slices.IndexFunc(a.Params, func(p Param) bool { return p.Name == name })
		if i < 0 {
			if len(a.Params) == 0 {
				return nil, fmt.Errorf("%w %q: action %q takes no parameters", ErrBadParam, truncate(name), a.Name)
			}
			names := make([]string, 0, len(a.Params))
			for _, p := range a.Params {
				names = append(names, p.Name)
			}
			return nil, fmt.Errorf("%w %q: action %q takes %s", ErrBadParam, truncate(name), a.Name, strings.Join(names, ", "))
		}
		if err := checkValue(a.Params[i], v); err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrBadParam, name, err)
		}
		out[name] = v
	}
	for _, p := range a.Params {
		if _, ok := out[p.Name]; !ok && p.Default != "" {
			out[p.Name] = p.Default
		}
	}
	return out, nil
}

func checkValue(p Param, v string) error {
	if len(v) > maxParamValue {
		return fmt.Errorf("value is longer than %d bytes", maxParamValue)
	}
	switch p.Type {
	case ParamNumber:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", truncate(v))
		}
	case ParamInteger:
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return fmt.Errorf("%q is not a 32-bit integer", truncate(v))
		}
	case ParamBoolean:
		if _, err := strconv.ParseBool(v); err != nil {
			return fmt.Errorf("%q is not true or false", truncate(v))
		}
	}
	return nil
}

// changes reads what an action returned: the changed object (a patch of
// obj) or a list of {operation, resource}.
func (e *Engine) changes(obj *unstructured.Unstructured, result any) ([]Change, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadResult, fmt.Sprintf(format, args...))
	}
	switch r := result.(type) {
	case map[string]any:
		c, err := e.patch(obj, r)
		if err != nil {
			return nil, bad("%v", err)
		}
		return []Change{c}, nil
	case []any:
		if len(r) > maxChanges {
			return nil, bad("the action returned %d changes, more than %d", len(r), maxChanges)
		}
		out := make([]Change, 0, len(r))
		for i, item := range r {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, bad("item %d is a %T; want {operation = \"create\" or \"patch\", resource = {...}}", i+1, item)
			}
			res, ok := m["resource"].(map[string]any)
			if !ok {
				return nil, bad("item %d has no resource table", i+1)
			}
			var c Change
			var err error
			switch op, _ := m["operation"].(string); Operation(op) {
			case OperationPatch:
				c, err = e.patch(obj, res)
			case OperationCreate:
				c, err = e.create(obj, res)
			default:
				return nil, bad("item %d: operation %q; want \"create\" or \"patch\"", i+1, truncate(op))
			}
			if err != nil {
				return nil, bad("item %d: %v", i+1, err)
			}
			out = append(out, c)
		}
		return out, nil
	case nil:
		return nil, bad("the action returned nothing; return obj or a list of {operation, resource}")
	default:
		return nil, bad("the action returned a %T; return obj or a list of {operation, resource}", result)
	}
}

// patch checks a patch of obj: the same group, kind, namespace and name.
func (e *Engine) patch(obj *unstructured.Unstructured, res map[string]any) (Change, error) {
	after := &unstructured.Unstructured{Object: reshape(res, obj.Object).(map[string]any)}
	if err := checkIdentity(after); err != nil {
		return Change{}, err
	}
	if objectGroupKind(after) != objectGroupKind(obj) || after.GetName() != obj.GetName() || after.GetNamespace() != obj.GetNamespace() {
		return Change{}, fmt.Errorf("a patch may only change the object the action ran on (%s %s), not %s %s",
			objectGroupKind(obj), objectRef(obj), objectGroupKind(after), objectRef(after))
	}
	if mf, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "metadata", "managedFields"); ok {
		// Scripts never see managedFields; they stay as they were.
		_ = unstructured.SetNestedField(after.Object, mf, "metadata", "managedFields")
	}
	before, err := json.Marshal(obj.Object)
	if err != nil {
		return Change{}, err
	}
	now, err := json.Marshal(after.Object)
	if err != nil {
		return Change{}, err
	}
	p, err := jsonpatch.CreateMergePatch(before, now)
	if err != nil {
		return Change{}, fmt.Errorf("compute the patch: %w", err)
	}
	return Change{Operation: OperationPatch, Object: after, Patch: p}, nil
}

// create checks a new object: named, in obj's namespace (given it when it
// has none), and cluster-scoped only if obj is.
func (e *Engine) create(obj *unstructured.Unstructured, res map[string]any) (Change, error) {
	u := &unstructured.Unstructured{Object: res}
	if err := checkIdentity(u); err != nil {
		return Change{}, err
	}
	gk := objectGroupKind(u)
	if e.clusterScoped == nil {
		return Change{}, fmt.Errorf("cannot create %s %s: the scope of kinds is unknown here", gk, objectRef(u))
	}
	switch clusterScoped := e.clusterScoped(gk.group, gk.kind); {
	case clusterScoped && obj.GetNamespace() != "":
		return Change{}, fmt.Errorf("an action on a namespaced object may not create the cluster-scoped %s %s", gk, u.GetName())
	case clusterScoped:
		if u.GetNamespace() != "" {
			return Change{}, fmt.Errorf("%s is cluster-scoped; %s gives it namespace %q", gk, u.GetName(), u.GetNamespace())
		}
	case obj.GetNamespace() == "":
		return Change{}, fmt.Errorf("an action on a cluster-scoped object may only create cluster-scoped objects, not %s %s", gk, objectRef(u))
	case u.GetNamespace() == "":
		u.SetNamespace(obj.GetNamespace())
	case u.GetNamespace() != obj.GetNamespace():
		return Change{}, fmt.Errorf("%s %s is not in the namespace of the object the action ran on (%s)", gk, objectRef(u), obj.GetNamespace())
	}
	return Change{Operation: OperationCreate, Object: u}, nil
}

// checkIdentity checks apiVersion, kind and metadata.name.
func checkIdentity(u *unstructured.Unstructured) error {
	apiVersion, _ := u.Object["apiVersion"].(string)
	kind, _ := u.Object["kind"].(string)
	if apiVersion == "" || kind == "" {
		return errors.New("the object has no apiVersion or kind")
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return fmt.Errorf("apiVersion %q: %w", truncate(apiVersion), err)
	}
	if _, ok := u.Object["metadata"].(map[string]any); !ok {
		return fmt.Errorf("the %s has no metadata", kind)
	}
	name := u.GetName()
	if name == "" {
		return fmt.Errorf("the %s has no metadata.name", kind)
	}
	if msgs := content.IsPathSegmentName(name); len(msgs) > 0 || len(name) > 253 {
		return fmt.Errorf("the %s's name %q is not valid", kind, truncate(name))
	}
	if ns := u.GetNamespace(); ns != "" && (len(content.IsPathSegmentName(ns)) > 0 || len(ns) > 63) {
		return fmt.Errorf("the %s's namespace %q is not valid", kind, truncate(ns))
	}
	return nil
}

// reshape gives back to a returned value the shape Lua lost: an empty
// table is read as a map, so where the original held a list (args: [])
// the list comes back.
func reshape(v, orig any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			if _, ok := orig.([]any); ok {
				return []any{}
			}
			return x
		}
		om, _ := orig.(map[string]any)
		for k, item := range x {
			x[k] = reshape(item, om[k])
		}
		return x
	case []any:
		ol, _ := orig.([]any)
		for i, item := range x {
			var o any
			if i < len(ol) {
				o = ol[i]
			}
			x[i] = reshape(item, o)
		}
		return x
	}
	return v
}
