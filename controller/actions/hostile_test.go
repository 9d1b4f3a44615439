package actions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/health"
)

// What a script returns is checked before anything would be written; a
// hostile or broken result is refused with the rule it broke, and nothing
// panics.
func TestHostileResults(t *testing.T) {
	objs := objects(t)
	for _, tc := range []struct {
		name, discovery, action string
		object                  string
		want                    string
	}{
		{name: "patch another object", action: `obj.metadata.name = "other"; return obj`,
			want: "a patch may only change the object the action ran on (ConfigMap shop/settings), not ConfigMap shop/other"},
		{name: "patch another kind", action: `obj.kind = "Secret"; return {{operation = "patch", resource = obj}}`,
			want: "item 1: a patch may only change the object"},
		{name: "create in another namespace", action: `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x", namespace = "kube-system"}}}}`,
			want: "ConfigMap kube-system/x is not in the namespace of the object the action ran on (shop)"},
		{name: "create a cluster-scoped kind", action: `return {{operation = "create", resource = {apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRoleBinding", metadata = {name = "admin"}}}}`,
			want: "may not create the cluster-scoped rbac.authorization.k8s.io/ClusterRoleBinding admin"},
		{name: "namespaced kind from a cluster-scoped object", object: "shop", action: `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "x", namespace = "shop"}}}}`,
			want: "an action on a cluster-scoped object may only create cluster-scoped objects"},
		{name: "no name", action: `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {}}}}`,
			want: "the ConfigMap has no metadata.name"},
		{name: "bad name", action: `return {{operation = "create", resource = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = "../etc"}}}}`,
			want: `name "../etc" is not valid`},
		{name: "no kind", action: `return {{operation = "create", resource = {apiVersion = "v1", metadata = {name = "x"}}}}`,
			want: "no apiVersion or kind"},
		{name: "delete", action: `return {{operation = "delete", resource = obj}}`,
			want: `operation "delete"; want "create" or "patch"`},
		{name: "no resource", action: `return {{operation = "create"}}`, want: "item 1 has no resource table"},
		{name: "nothing", action: `return nil`, want: "the action returned nothing"},
		{name: "a string", action: `return "done"`, want: "the action returned a string"},
		{name: "too many changes", action: `local r = {}; for i = 1, 17 do r[i] = {operation = "patch", resource = obj} end; return r`,
			want: "returned 17 changes, more than 16"},
		{name: "a function", action: `return {f = function() end}`, want: "holds a function"},
		{name: "error", action: `error("cannot do it")`, want: "cannot do it"},
		{name: "discovery lists an undefined action", discovery: `return {run = {}, ghost = {}}`,
			want: `discovery.lua returned action "ghost", which has no definition`},
		{name: "discovery bad name", discovery: `return {["run now"] = {}}`, want: `action name "run now"`},
		{name: "discovery bad disabled", discovery: `return {run = {disabled = "yes"}}`, want: "disabled is a string, want a boolean"},
		{name: "discovery bad param type", discovery: `return {run = {params = {{name = "n", type = "date"}}}}`, want: `type "date", want string, number, integer or boolean`},
		{name: "discovery list", discovery: `return {"run"}`, want: "returned a list"},
		{name: "discovery too many", discovery: `local a = {}; for i = 1, 65 do a["a" .. i] = {} end; return a`, want: "more than 64"},
		{name: "discovery long label", discovery: `return {run = {displayName = "` + strings.Repeat("x", 200) + `"}}`, want: "displayName is longer than 128 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			discovery := tc.discovery
			if discovery == "" {
				discovery = `return {run = {}}`
			}
			action := tc.action
			if action == "" {
				action = "return obj"
			}
			object := objs["settings"]
			custom := Custom{Kind: "ConfigMap", Discovery: discovery, Definitions: []Definition{{Name: "run", Script: action}}}
			if tc.object != "" {
				object = objs[tc.object]
				custom.Kind = object.GetKind()
			}
			e := newEngine(t, custom)
			_, err := e.Run(t.Context(), object, "run", nil)
			var se *health.ScriptError
			if err == nil || !strings.Contains(err.Error(), tc.want) || (!errors.Is(err, ErrBadResult) && !errors.As(err, &se)) {
				t.Errorf("error %v, want ErrBadResult or a ScriptError with %q", err, tc.want)
			}
		})
	}
}

// Without a scope resolver no action may create anything.
func TestCreateNeedsScope(t *testing.T) {
	objs := objects(t)
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(t.Context(), objs["report"], "create-job", nil); !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), "scope of kinds is unknown") {
		t.Errorf("error %v, want a refusal for the unknown scope", err)
	}
	// WithScope gives the same engine a cluster's kinds; e keeps none.
	scoped := e.WithScope(testScope)
	if changes, err := scoped.Run(t.Context(), objs["report"], "create-job", nil); err != nil || len(changes) != 1 {
		t.Errorf("with a scope: changes %+v, error %v; want one create", changes, err)
	}
	if _, err := e.Run(t.Context(), objs["report"], "create-job", nil); !errors.Is(err, ErrBadResult) {
		t.Errorf("WithScope changed the engine it was called on: error %v", err)
	}
}

// New refuses what cannot work, naming the kind and the action.
func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		custom []Custom
		want   string
	}{
		{[]Custom{{Kind: "ConfigMap", Discovery: "return {"}}, "actions for ConfigMap: discovery.lua:"},
		{[]Custom{{Kind: "ConfigMap", Discovery: "return {}", Definitions: []Definition{{Name: "a", Script: "return obj +"}}}}, "actions for ConfigMap: a action.lua:"},
		{[]Custom{{Kind: "ConfigMap", Discovery: "return {}", Definitions: []Definition{{Name: "a b", Script: "return obj"}}}}, `action name "a b"`},
		{[]Custom{{Group: "example.com", Kind: "*", Discovery: "return {}"}}, "not a wildcard"},
		{[]Custom{{Kind: "ConfigMap", Discovery: "return {}"}, {Kind: "ConfigMap", Discovery: "return {}"}}, "defined twice"},
	} {
		_, err := New(Options{Custom: tc.custom})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.custom, err, tc.want)
		}
	}
}

// Whatever a discovery script returns, Discover returns an error or
// actions, never a panic.
func FuzzDiscovery(f *testing.F) {
	for _, s := range []string{`{run = {}}`, `{run = {params = {{name = "x", default = 1}}}}`, `{1, 2}`, `"x"`, `{run = {disabled = true, iconClass = "a"}}`} {
		f.Add(s)
	}
	objs := objects(f)
	f.Fuzz(func(t *testing.T, ret string) {
		e, err := New(Options{Custom: []Custom{{Kind: "ConfigMap", Discovery: fmt.Sprintf("return %s", ret), Definitions: []Definition{{Name: "run", Script: "return obj"}}}}})
		if err != nil {
			return
		}
		_, _ = e.Discover(t.Context(), objs["settings"])
	})
}

// Built-in actions on objects of an unexpected shape fail with an error.
func TestBuiltinOddShapes(t *testing.T) {
	e := newEngine(t)
	for _, tc := range []struct {
		name   string
		object map[string]any
		action string
	}{
		{"template is a string", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "x", "namespace": "a"}, "spec": map[string]any{"template": "odd"}}, "restart"},
		{"spec is a list", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "x", "namespace": "a"}, "spec": []any{"odd"}}, "suspend"},
		{"jobTemplate holds a channel", map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "x", "namespace": "a"}, "spec": map[string]any{"jobTemplate": map[string]any{"spec": make(chan int)}}}, "create-job"},
	} {
		_, err := e.Run(t.Context(), &unstructured.Unstructured{Object: tc.object}, tc.action, nil)
		if err == nil {
			t.Errorf("%s: %s ran; want an error", tc.name, tc.action)
		}
	}
}
