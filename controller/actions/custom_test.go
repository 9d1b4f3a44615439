package actions

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/controller/health"
)

// configMapActions are custom actions for ConfigMaps: a v1 action with a
// parameter and a v2 action that creates a ConfigMap and patches obj.
var configMapActions = Custom{
	Kind: "ConfigMap",
	Discovery: `
		local actions = {}
		actions["set-mode"] = {displayName = "Set mode", params = {{name = "mode", default = "slow"}, {name = "weight", type = "number"}}}
		actions["copy"] = {iconClass = "fa fa-fw fa-copy", disabled = obj.data.mode == "off"}
		return actions`,
	Definitions: []Definition{
		{Name: "set-mode", Script: `
			obj.data.mode = actionParams["mode"]
			if actionParams["weight"] ~= nil then obj.data.weight = actionParams["weight"] end
			return obj`},
		{Name: "copy", Script: `
			local copy = {apiVersion = "v1", kind = "ConfigMap", metadata = {name = obj.metadata.name .. "-copy", labels = {}}, data = obj.data}
			copy.metadata.labels["app.kubernetes.io/instance"] = obj.metadata.labels["app.kubernetes.io/instance"]
			obj.metadata.labels["copied"] = "true"
			return {{operation = "create", resource = copy}, {operation = "patch", resource = obj}}`},
	},
}

func TestCustomDiscover(t *testing.T) {
	e, objs := newEngine(t, configMapActions), objects(t)
	got, err := e.Discover(t.Context(), objs["settings"])
	if err != nil {
		t.Fatal(err)
	}
	want := []Action{
		{Name: "copy", IconClass: "fa fa-fw fa-copy"},
		{Name: "set-mode", DisplayName: "Set mode", Params: []Param{{Name: "mode", Type: "string", Default: "slow"}, {Name: "weight", Type: "number"}}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("actions (-got +want):\n%s", diff)
	}
}

// A v1 action returns obj: one patch, managedFields untouched; parameters
// reach it as strings, and a declared one left out takes its default.
func TestCustomRunObject(t *testing.T) {
	e, objs := newEngine(t, configMapActions), objects(t)
	for _, tc := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"mode": "eco", "weight": "1.5"}, `{"data":{"mode":"eco","weight":"1.5"}}`},
		{nil, `{"data":{"mode":"slow"}}`},
	} {
		changes, err := e.Run(t.Context(), objs["settings"], "set-mode", tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 1 || changes[0].Operation != OperationPatch || string(changes[0].Patch) != tc.want {
			t.Errorf("params %v: changes %+v, want one patch %s", tc.params, changes, tc.want)
		}
		if mf := changes[0].Object.GetManagedFields(); len(mf) != 1 {
			t.Errorf("managedFields %v, want them kept", mf)
		}
	}
}

// A v2 action returns a list: the created object lands in obj's namespace.
func TestCustomRunList(t *testing.T) {
	e, objs := newEngine(t, configMapActions), objects(t)
	changes, err := e.Run(t.Context(), objs["settings"], "copy", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Operation != OperationCreate || changes[1].Operation != OperationPatch {
		t.Fatalf("changes %+v, want a create and a patch", changes)
	}
	created := changes[0].Object
	if created.GetName() != "settings-copy" || created.GetNamespace() != "shop" || created.GetLabels()["app.kubernetes.io/instance"] != "shop" {
		t.Errorf("created %v, want settings-copy in shop with the instance label", created.Object)
	}
	if got := string(changes[1].Patch); got != `{"metadata":{"labels":{"copied":"true"}}}` {
		t.Errorf("patch %s", got)
	}
}

// Custom actions replace the kind's built-in ones unless merged; merged,
// a custom action of the same name wins.
func TestCustomReplacesOrMergesBuiltin(t *testing.T) {
	objs := objects(t)
	custom := Custom{Group: "apps", Kind: "Deployment",
		Discovery:   `return {restart = {displayName = "Custom restart"}, annotate = {}}`,
		Definitions: []Definition{{Name: "restart", Script: `obj.metadata.labels = {restarted = "yes"}; return obj`}, {Name: "annotate", Script: `return obj`}},
	}
	names := func(e *Engine) []string {
		got, err := e.Discover(t.Context(), objs["web"])
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range got {
			out = append(out, a.Name+"/"+a.DisplayName)
		}
		return out
	}
	if diff := cmp.Diff(names(newEngine(t, custom)), []string{"annotate/", "restart/Custom restart"}); diff != "" {
		t.Errorf("replaced (-got +want):\n%s", diff)
	}
	custom.MergeBuiltin = true
	merged := newEngine(t, custom)
	if diff := cmp.Diff(names(merged), []string{"annotate/", "pause/Pause rollout", "restart/Custom restart", "resume/Resume rollout", "scale/Scale"}); diff != "" {
		t.Errorf("merged (-got +want):\n%s", diff)
	}
	changes, err := merged.Run(t.Context(), objs["web"], "restart", nil)
	if err != nil || string(changes[0].Patch) != `{"metadata":{"labels":{"restarted":"yes"}}}` {
		t.Errorf("merged restart: %v %+v, want the custom script's patch", err, changes)
	}
	if changes, err := merged.Run(t.Context(), objs["web"], "pause", nil); err != nil || string(changes[0].Patch) != `{"spec":{"paused":true}}` {
		t.Errorf("merged pause: %v %+v, want the built-in patch", err, changes)
	}
}

// Parameters are checked against what the action declares.
func TestParams(t *testing.T) {
	e, objs := newEngine(t, configMapActions), objects(t)
	for _, tc := range []struct {
		object, action string
		params         map[string]string
		want           string
	}{
		{"web", "scale", map[string]string{"replicas": "three"}, `replicas: "three" is not a 32-bit integer`},
		{"web", "scale", map[string]string{"replicas": "-1"}, `"-1" is not a whole number of at least 0`},
		{"web", "scale", map[string]string{"count": "3"}, `"count": action "scale" takes replicas`},
		{"web", "restart", map[string]string{"when": "now"}, `"when": action "restart" takes no parameters`},
		{"settings", "set-mode", map[string]string{"weight": "heavy"}, `weight: "heavy" is not a number`},
		{"settings", "set-mode", map[string]string{"mode": strings.Repeat("x", 5000)}, "longer than 4096 bytes"},
	} {
		_, err := e.Run(t.Context(), objs[tc.object], tc.action, tc.params)
		if !errors.Is(err, ErrBadParam) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s %v: error %v, want ErrBadParam with %q", tc.object, tc.action, tc.params, err, tc.want)
		}
	}
}

// A disabled action and an unknown one do not run.
func TestDisabledAndUnknown(t *testing.T) {
	e, objs := newEngine(t), objects(t)
	if _, err := e.Run(t.Context(), objs["web"], "resume", nil); !errors.Is(err, ErrDisabled) {
		t.Errorf("resume on a running Deployment: %v, want ErrDisabled", err)
	}
	if _, err := e.Run(t.Context(), objs["web"], "explode", nil); !errors.Is(err, ErrNoAction) || !strings.Contains(err.Error(), "pause, restart, resume, scale") {
		t.Errorf("unknown action: %v, want ErrNoAction listing the others", err)
	}
	if _, err := e.Run(t.Context(), objs["settings"], "restart", nil); !errors.Is(err, ErrNoAction) || !strings.Contains(err.Error(), "ConfigMap has no actions") {
		t.Errorf("kind without actions: %v, want ErrNoAction", err)
	}
}

// Scripts run under the health engine's limits: an endless loop and a
// string that grows without end are stopped, in discovery and in actions.
func TestBudgets(t *testing.T) {
	objs := objects(t)
	lua, err := health.New(health.Options{MemoryBudget: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{Lua: lua, Custom: []Custom{
		{Kind: "ConfigMap", Discovery: `while true do end`},
		{Kind: "Secret", Discovery: `return {grow = {}}`, Definitions: []Definition{{Name: "grow", Script: `local s = "x"; while true do s = s .. s end`}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Discover(t.Context(), objs["settings"]); !errors.Is(err, health.ErrScriptTimeout) {
		t.Errorf("endless discovery: %v, want ErrScriptTimeout", err)
	}
	secret := objs["settings"].DeepCopy()
	secret.SetKind("Secret")
	if _, err := e.Run(t.Context(), secret, "grow", nil); !errors.Is(err, health.ErrScriptMemory) {
		t.Errorf("growing string: %v, want ErrScriptMemory", err)
	}
}
