package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// RunScript gives a script its globals as checks get obj and hands back
// the returned table as JSON-like Go values.
func TestRunScriptConverts(t *testing.T) {
	e, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := CompileScript("test", `
		obj.spec.replicas = tonumber(params.replicas)
		obj.spec.ratio = 0.5
		obj.metadata.annotations = {}
		return {obj, "x" .. "y", true}`, false)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"metadata": map[string]any{"name": "web", "managedFields": []any{"x"}}, "spec": map[string]any{"replicas": int64(1)}}
	got, err := e.RunScript(t.Context(), s, map[string]any{"obj": obj, "params": map[string]any{"replicas": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"metadata": map[string]any{"name": "web", "annotations": map[string]any{}}, "spec": map[string]any{"replicas": int64(3), "ratio": 0.5}},
		"xy", true,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("result (-got +want):\n%s", diff)
	}
}

// What Go cannot carry, and the script's own errors, are ScriptErrors
// naming the script; a loop is stopped by the timeout.
func TestRunScriptErrors(t *testing.T) {
	e, err := New(Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ src, want string }{
		{`error("no way")`, "no way"},
		{`return function() end`, "function"},
		{`local t = {}; t.self = t; return t`, "contains itself"},
		{`return {1, x = 2}`, "both string and number keys"},
		{`return {[1] = 1, [3] = 3}`, "holes"},
		{`return 0/0`, "JSON cannot carry"},
	} {
		s, err := CompileScript("bad", tc.src, false)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.RunScript(t.Context(), s, nil)
		se, ok := errors.AsType[*ScriptError](err)
		if !ok || !strings.Contains(se.Error(), tc.want) || !strings.HasPrefix(se.Error(), "bad:") {
			t.Errorf("%s: error %v, want a ScriptError naming the script and %q", tc.src, err, tc.want)
		}
	}
	s, err := CompileScript("loop", `while true do end`, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.RunScript(t.Context(), s, nil); !errors.Is(err, ErrScriptTimeout) {
		t.Errorf("endless loop: error %v, want ErrScriptTimeout", err)
	}
}
