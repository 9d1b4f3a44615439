package health

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// certificateScript is a typical CRD check: Ready condition, with Issuing
// in progress, in Argo CD's style (restricted libraries suffice).
const certificateScript = `
local hs = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for i, condition in ipairs(obj.status.conditions) do
    if condition.type == "Issuing" and condition.status == "True" then
      hs.status = "Progressing"
      hs.message = condition.message
      return hs
    end
  end
  for i, condition in ipairs(obj.status.conditions) do
    if condition.type == "Ready" then
      if condition.status == "True" then
        hs.status = "Healthy"
      else
        hs.status = "Degraded"
      end
      hs.message = condition.message
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
`

// checkScript runs script (for group example.com, kind Widget) against obj.
func checkScript(t *testing.T, script string, openLibs bool, obj map[string]any) (*Result, error) {
	t.Helper()
	e := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: script, UseOpenLibs: openLibs}}})
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}}
	for k, v := range obj {
		u.Object[k] = v
	}
	return e.Check(t.Context(), u)
}

func TestLuaCRDConditions(t *testing.T) {
	e := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: "cert-manager.io", Kind: "Certificate", Script: certificateScript}}})
	tests := []struct {
		fixture string
		want    Result
	}{
		{"crd/ready.yaml", Result{Status: StatusHealthy, Message: "Certificate is up to date and has not expired"}},
		{"crd/not-ready.yaml", Result{Status: StatusDegraded, Message: "Issuing certificate as Secret does not exist"}},
		{"crd/issuing.yaml", Result{Status: StatusProgressing, Message: "Issuing certificate as Secret does not exist"}},
		{"crd/no-status.yaml", Result{Status: StatusProgressing, Message: "Waiting for certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := e.Check(t.Context(), loadFixture(t, tt.fixture))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &tt.want); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

func statusScript(status, message string) string {
	return fmt.Sprintf("return {status = %q, message = %q}", status, message)
}

func TestLuaPrecedence(t *testing.T) {
	e := newEngine(t, Options{LuaChecks: []LuaCheck{
		{Group: "*", Kind: "*", Script: statusScript("Suspended", "any")},
		{Group: "*.example.com", Kind: "*", Script: statusScript("Degraded", "example wildcard")},
		{Group: "cert-manager.io", Kind: "*", Script: statusScript("Missing", "group wildcard")},
		{Group: "cert-manager.io", Kind: "Certificate", Script: statusScript("Healthy", "exact")},
		{Group: "apps", Kind: "Deployment", Script: statusScript("Degraded", "lua overrides built-in")},
	}})
	tests := []struct {
		name   string
		object *unstructured.Unstructured
		want   Result
	}{
		{"exact beats wildcards", loadFixture(t, "crd/ready.yaml"), Result{Status: StatusHealthy, Message: "exact"}},
		{"group wildcard", object("cert-manager.io/v1", "Issuer"), Result{Status: StatusMissing, Message: "group wildcard"}},
		{"more specific wildcard", object("db.example.com/v1", "Cluster"), Result{Status: StatusDegraded, Message: "example wildcard"}},
		{"catch-all", object("other.io/v1", "Thing"), Result{Status: StatusSuspended, Message: "any"}},
		{"catch-all covers core kinds without a built-in check", object("v1", "ConfigMap"), Result{Status: StatusSuspended, Message: "any"}},
		{"lua overrides built-in", loadFixture(t, "deployment/healthy.yaml"), Result{Status: StatusDegraded, Message: "lua overrides built-in"}},
		{"wildcard overrides built-in", loadFixture(t, "pvc/bound.yaml"), Result{Status: StatusSuspended, Message: "any"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Check(t.Context(), tt.object)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &tt.want); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

func object(apiVersion, kind string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "x"}}}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "apps", true},
		{"apps", "apps", true},
		{"apps", "app", false},
		{"*.example.com", "db.example.com", true},
		{"*.example.com", "example.com", false},
		{"cert-*.io", "cert-manager.io", true},
		{"*a*b*", "xaybz", true},
		{"*a*b", "xaybz", false},
		{"a**", "abc", true},
	}
	for _, tt := range tests {
		if got := wildcardMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestLuaReturnContract(t *testing.T) {
	tests := []struct {
		name   string
		script string
		want   Result
	}{
		{"valid", `return {status = "Degraded", message = "broken"}`, Result{Status: StatusDegraded, Message: "broken"}},
		{"no message", `return {status = "Healthy"}`, Result{Status: StatusHealthy}},
		{"number message", `return {status = "Healthy", message = 42}`, Result{Status: StatusHealthy, Message: "42"}},
		{"nil", `return nil`, Result{Status: StatusUnknown, Message: "the health script returned an invalid health status: want a table with status and message, got nil"}},
		{"no return", `local x = 1`, Result{Status: StatusUnknown, Message: "the health script returned an invalid health status: want a table with status and message, got nil"}},
		{"number", `return 7`, Result{Status: StatusUnknown, Message: "the health script returned an invalid health status: want a table with status and message, got number"}},
		{"bad status", `return {status = "Fine"}`, Result{Status: StatusUnknown, Message: `the health script returned an invalid health status "Fine"`}},
		{"lower-case status", `return {status = "healthy"}`, Result{Status: StatusUnknown, Message: `the health script returned an invalid health status "healthy"`}},
		{"missing status", `return {message = "hi"}`, Result{Status: StatusUnknown, Message: "the health script returned an invalid health status: status is nil, not a string"}},
		{"status not a string", `return {status = true}`, Result{Status: StatusUnknown, Message: "the health script returned an invalid health status: status is boolean, not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := checkScript(t, tt.script, false, nil)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &tt.want); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name    string
		checks  []LuaCheck
		wantErr []string
	}{
		{"syntax error", []LuaCheck{{Group: "cert-manager.io", Kind: "Certificate", Script: "local hs = {}\nif obj.status then\n  hs.status = = 1\nend\nreturn hs"}},
			[]string{"cert-manager.io/Certificate", "line:3"}},
		{"unclosed block", []LuaCheck{{Kind: "ConfigMap", Script: "if true then\n"}}, []string{"ConfigMap", "EOF"}},
		{"empty kind", []LuaCheck{{Group: "apps", Script: "return {}"}}, []string{"kind is empty"}},
		{"duplicate", []LuaCheck{{Group: "apps", Kind: "*", Script: "return {}"}, {Group: "apps", Kind: "*", Script: "return {}"}}, []string{"apps/*", "defined twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Options{LuaChecks: tt.checks})
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

func TestLuaRuntimeError(t *testing.T) {
	got, err := checkScript(t, "local hs = {}\nhs.status = obj.status.health.status\nreturn hs", false, nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got.Status != StatusUnknown {
		t.Errorf("status = %s, want Unknown", got.Status)
	}
	for _, want := range []string{"the health script failed", "health(example.com/Widget):2:", "attempt to index"} {
		if !strings.Contains(got.Message, want) {
			t.Errorf("message %q does not contain %q", got.Message, want)
		}
	}
}

func TestLuaErrorCall(t *testing.T) {
	got, err := checkScript(t, `error("custom failure")`, false, nil)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if got.Status != StatusUnknown || !strings.Contains(got.Message, "custom failure") {
		t.Errorf("got %+v, want Unknown mentioning the error", got)
	}
}

// TestLuaLibraries runs scripts that report what they can reach, in both
// modes. Each returns Healthy with a message listing its findings.
func TestLuaLibraries(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		restricted Result
		open       Result
	}{
		{
			name:       "string library",
			script:     `return {status = "Healthy", message = string.upper("ok")}`,
			restricted: Result{Status: StatusUnknown},
			open:       Result{Status: StatusHealthy, Message: "OK"},
		},
		{
			name:       "string methods",
			script:     `local s = "a-b"; return {status = "Healthy", message = s:gsub("-", "+")}`,
			restricted: Result{Status: StatusUnknown},
			open:       Result{Status: StatusHealthy, Message: "a+b"},
		},
		{
			name:       "math library",
			script:     `return {status = "Healthy", message = tostring(math.max(1, 3))}`,
			restricted: Result{Status: StatusUnknown},
			open:       Result{Status: StatusHealthy, Message: "3"},
		},
		{
			name:       "table library",
			script:     `local t = {"b", "a"}; table.sort(t); table.insert(t, "c"); return {status = "Healthy", message = table.concat(t, ",")}`,
			restricted: Result{Status: StatusHealthy, Message: "a,b,c"},
			open:       Result{Status: StatusHealthy, Message: "a,b,c"},
		},
		{
			name: "require os gives only time, date, difftime and clock",
			script: `local os = require("os")
local names = {}
for k in pairs(os) do table.insert(names, k) end
table.sort(names)
return {status = "Healthy", message = table.concat(names, ",")}`,
			restricted: Result{Status: StatusHealthy, Message: "clock,date,difftime,time"},
			open:       Result{Status: StatusHealthy, Message: "clock,date,difftime,time"},
		},
		{
			name:       "os.time, os.date and os.difftime work",
			script:     `local t = os.time({year = 2026, month = 1, day = 2, hour = 3}); return {status = "Healthy", message = os.date("!%Y", t) .. " " .. type(os.time()) .. " " .. type(os.clock()) .. " " .. os.difftime(t + 90, t) .. " " .. os.date("!%F %H%P", 0)}`,
			restricted: Result{Status: StatusHealthy, Message: "2026 number number 90 1970-01-01 00am"},
			open:       Result{Status: StatusHealthy, Message: "2026 number number 90 1970-01-01 00am"},
		},
		{
			name: "dangerous functions are absent",
			script: `local found = {}
for _, name in ipairs({"io", "debug", "channel", "dofile", "loadfile", "load", "loadstring", "module", "collectgarbage", "getfenv", "setfenv"}) do
  if _G[name] ~= nil then table.insert(found, name) end
end
for _, name in ipairs({"execute", "exit", "getenv", "remove", "rename", "tmpname", "setenv", "setlocale"}) do
  if os[name] ~= nil then table.insert(found, "os." .. name) end
end
return {status = "Healthy", message = "found:" .. table.concat(found, ",")}`,
			restricted: Result{Status: StatusHealthy, Message: "found:"},
			open:       Result{Status: StatusHealthy, Message: "found:"},
		},
	}
	for _, tt := range tests {
		for _, open := range []bool{false, true} {
			want := tt.restricted
			if open {
				want = tt.open
			}
			t.Run(fmt.Sprintf("%s/open=%v", tt.name, open), func(t *testing.T) {
				got, err := checkScript(t, tt.script, open, nil)
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if want.Status == StatusUnknown {
					// A missing library is a runtime error; its text is gopher-lua's.
					if got.Status != StatusUnknown || !strings.Contains(got.Message, "the health script failed") {
						t.Errorf("got %+v, want a script failure", got)
					}
					return
				}
				if diff := cmp.Diff(got, &want); diff != "" {
					t.Errorf("Check (-got +want):\n%s", diff)
				}
			})
		}
	}
}

// loadLuaScript reads testdata/lua/<name>.lua, a check written in the
// style of Argo CD's community health checks.
func loadLuaScript(tb testing.TB, name string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lua", name+".lua"))
	if err != nil {
		tb.Fatalf("read script: %v", err)
	}
	return string(data)
}

// TestLuaArgoCDConstructs runs checks built from what Argo CD's community
// checks use (string.match captures into os.time, os.difftime, os.date,
// string.format, gmatch, find, select, next, json, string methods ...)
// against objects of our own, with the libraries Argo CD would give them.
func TestLuaArgoCDConstructs(t *testing.T) {
	tests := []struct {
		script, fixture string
		openLibs        bool
		want            Result
	}{
		{"validity", "lua/validity.yaml", true, Result{Status: StatusHealthy, Message: "Valid for 60 days, until 2026-03-02"}},
		{"conditions", "lua/conditions.yaml", true, Result{Status: StatusHealthy, Message: "3/3 ready; conditions Available+Progressing; zones ABC; 3 args; table"}},
		{"conditions", "lua/deadline.yaml", true, Result{Status: StatusDegraded, Message: `Canary "checkout" has timed out progressing.`}},
		{"annotation", "lua/annotation-healthy.yaml", false, Result{Status: StatusHealthy, Message: `2 conditions, {"since":3,"status":"True","type":"Active"}`}},
		{"annotation", "lua/annotation-failing.yaml", false, Result{Status: StatusDegraded, Message: "Metrics: no metrics for 5m"}},
		{"annotation", "lua/annotation-garbled.yaml", true, Result{Status: StatusDegraded, Message: "Bad annotation: unexpected end of JSON input"}},
		{"methods", "lua/methods.yaml", true, Result{Status: StatusHealthy, Message: `SHOP/CART runs "v2.4.1" (major 2) xy false`}},
		{"restricted", "lua/restricted.yaml", false, Result{Status: StatusHealthy, Message: "1=true,2=false keys=2 took=5400 epoch=1970-01-02T00:00:00Z n=16"}},
	}
	for _, tt := range tests {
		t.Run(tt.script+"/"+tt.fixture, func(t *testing.T) {
			obj := loadFixture(t, tt.fixture)
			gk := objectGroupKind(obj)
			e := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: gk.group, Kind: gk.kind, Script: loadLuaScript(t, tt.script), UseOpenLibs: tt.openLibs}}})
			got, err := e.Check(t.Context(), obj)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &tt.want); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

// os.time reads date fields as Argo CD's gopher-lua does: numbers, or
// strings holding them; missing and unreadable fields take defaults.
func TestLuaOsTime(t *testing.T) {
	tests := []struct {
		name, table string
		want        string // the same time as a table of numbers
	}{
		{"decimal strings", `{year = "2024", month = "3", day = "9", hour = "7", min = "5", sec = "1"}`, `{year = 2024, month = 3, day = 9, hour = 7, min = 5, sec = 1}`},
		{"leading zeros are decimal", `{year = "2024", month = "08", day = "010", hour = "09"}`, `{year = 2024, month = 8, day = 10, hour = 9}`},
		{"spaces, signs, exponents, hexadecimal", `{year = " 2024 ", month = "+2", day = "1e1", hour = "0x0A", min = "-5"}`, `{year = 2024, month = 2, day = 10, hour = 10, min = -5}`},
		{"fractions are dropped", `{year = 2024.9, month = "1.5", day = 1}`, `{year = 2024, month = 1, day = 1}`},
		{"hour defaults to 12, min and sec to 0", `{year = "2024", month = "1", day = "1"}`, `{year = 2024, month = 1, day = 1, hour = 12, min = 0, sec = 0}`},
		{"missing date fields default to -1", `{}`, `{year = -1, month = -1, day = -1}`},
		{"unreadable fields take the default", `{year = "MMXXIV", month = true, day = {}, hour = "nan", min = "inf", sec = "1_0"}`, `{year = -1, month = -1, day = -1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "local a, b = os.time(" + tt.table + "), os.time(" + tt.want + ")\n" +
				`return {status = a == b and "Healthy" or "Degraded", message = tostring(a - b)}`
			for _, open := range []bool{false, true} {
				got, err := checkScript(t, script, open, nil)
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: "0"}); diff != "" {
					t.Errorf("open=%v: Check (-got +want):\n%s", open, diff)
				}
			}
		})
	}
}

// The json module: require("json") in both modes, never a global; its
// results and errors, as Argo CD's gopher-json gives them.
func TestLuaJSON(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"decode", `local v = json.decode('{"a":[1,null,"x"],"b":{"c":true},"d":null}'); return #v.a .. " " .. v.a[2] .. " " .. tostring(v.b.c) .. " " .. tostring(v.d)`, "2 x true nil"},
		{"decode scalars", `return tostring(json.decode("1.5")) .. tostring(json.decode('"s"')) .. tostring(json.decode("null"))`, "1.5snil"},
		{"decode error", `local v, err = json.decode("{"); return tostring(v) .. ": " .. err`, "nil: unexpected end of JSON input"},
		{"encode object keys sorted", `return json.encode({b = 1, a = {c = "<&>"}, z = false})`, `{"a":{"c":"\u003c\u0026\u003e"},"b":1,"z":false}`},
		{"encode list", `return json.encode({1, 2.5, "x", 1e21, {}})`, `[1,2.5,"x",1e+21,[]]`},
		{"encode empty table", `return json.encode({})`, `[]`},
		{"encode scalars", `return json.encode("a\nb") .. json.encode(3) .. json.encode(nil) .. json.encode(true)`, `"a\nb"3nulltrue`},
		{"encode shared subtable", `local s = {1}; return json.encode({s, s})`, `[[1],[1]]`},
		{"encode sparse list", `local v, err = json.encode({1, nil, 3}); return tostring(v) .. ": " .. err`, "nil: cannot encode a sparse array to JSON"},
		{"encode mixed keys", `local v, err = json.encode({1, a = 2}); return tostring(v) .. ": " .. err`, "nil: cannot encode a table with mixed or invalid key types to JSON"},
		{"encode function", `local v, err = json.encode({f = print}); return tostring(v) .. ": " .. err`, "nil: cannot encode function to JSON"},
		{"encode NaN", `local v, err = json.encode(0/0); return tostring(v) .. ": " .. err`, "nil: json: unsupported value: NaN"},
		{"encode cycle raises", `local t = {}; t[1] = t; local ok, err = pcall(json.encode, t); return tostring(ok) .. " " .. tostring(string.find(err, "recursively nested", 1, true) ~= nil)`, "false true"},
		{"round trip", `local s = '{"items":[{"n":1},{"n":2}],"name":"x"}'; return json.encode(json.decode(s)) == s and "same" or "different"`, "same"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := "local json = require(\"json\")\nlocal m = (function() " + tt.script + " end)()\nreturn {status = \"Healthy\", message = m}"
			got, err := checkScript(t, script, true, nil)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: tt.want}); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
	for _, open := range []bool{false, true} {
		got, err := checkScript(t, `return {status = "Healthy", message = type(require("json").decode) .. " " .. tostring(json) .. " " .. tostring(package.loaded.json)}`, open, nil)
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: "function nil nil"}); diff != "" {
			t.Errorf("open=%v: require and globals (-got +want):\n%s", open, diff)
		}
	}
}

// TestLuaEscapes checks that calls reaching outside the VM fail as script
// errors, in both modes.
func TestLuaEscapes(t *testing.T) {
	scripts := map[string]string{
		"os.execute":   `os.execute("touch /tmp/graphcd-pwned")`,
		"io.open":      `io.open("/etc/passwd")`,
		"require io":   `local io = require("io")`,
		"require ffi":  `local x = require("ffi")`,
		"dofile":       `dofile("/etc/passwd")`,
		"loadstring":   `loadstring("return 1")()`,
		"load":         `load(function() return nil end)`,
		"getfenv":      `getfenv(0).x = 1`,
		"string.dump":  `string.dump(print)`,
		"package.path": `package.path = "/tmp/?.lua"; require("evil")`,
	}
	for name, script := range scripts {
		for _, open := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/open=%v", name, open), func(t *testing.T) {
				got, err := checkScript(t, script+"\nreturn {status = \"Healthy\"}", open, nil)
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if got.Status != StatusUnknown || !strings.Contains(got.Message, "the health script failed") {
					t.Errorf("got %+v, want a script failure", got)
				}
			})
		}
	}
}

func TestLuaResourceLimits(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantMsg string
	}{
		{"string.rep", `local s = string.rep("x", 1e10)`, "string.rep: result would exceed"},
		{"string.rep long pattern", `local s = string.rep(string.rep("x", 1000), 1e7)`, "string.rep: result would exceed"},
		{"string.gsub", `local s = string.rep("x", 4000); local r = s:gsub("x", s)`, "string.gsub: result would exceed"},
		{"string.gsub function", `local s = string.rep("x", 4000); local r = s:gsub("x", function() return s end)`, "string.gsub: result would exceed"},
		{"table.concat", `local s = string.rep("x", 1e6); local t = {}; for i = 1, 10 do t[i] = s end; local r = table.concat(t)`, "table.concat: result would exceed"},
		{"recursion", `local function f(n) return 1 + f(n + 1) end; f(1)`, "stack overflow"},
		{"concat doubling 34 times", `local s = "x"; for i = 1, 34 do s = s .. s end`, "string concatenation: result would exceed"},
		{"concat doubling in a global", `s = "x"; for i = 1, 34 do s = s .. s .. s .. s end`, "string concatenation: result would exceed"},
		{"concat in a nested function", `local function d(s) return s .. s end; local s = "x"; for i = 1, 34 do s = d(s) end`, "string concatenation: result would exceed"},
		{"string.format doubling", `local s = "x"; for i = 1, 34 do s = string.format("%s%s", s, s) end`, "string.format: result would exceed"},
		{"string.format widths", `local s = string.format(string.rep("%999999d", 100), 1)`, "string.format: result would exceed"},
		{"json.encode", `local s = string.rep("x", 3e6); local r = require("json").encode({s, s})`, "json.encode: result would exceed"},
		{"json.encode escapes", `local s = string.rep("<", 1e6); local r = require("json").encode(s)`, "json.encode: result would exceed"},
		{"json.encode doubling", `local t = {string.rep("x", 1e5)}; for i = 1, 40 do t = {t, t} end; local r = require("json").encode(t)`, "json.encode: result would exceed"},
		{"json.encode depth", `local t = {}; for i = 1, 1e5 do t = {t} end; local r = require("json").encode(t)`, "json.encode: tables nested deeper than 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The budgets must stop each script, not the clock: a time
			// limit far above any run keeps a loaded machine from
			// turning a budget error into a timeout.
			e := newEngine(t, Options{Timeout: time.Minute, LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: tt.script + "\nreturn {status = \"Healthy\"}", UseOpenLibs: true}}})
			got, err := e.Check(t.Context(), &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}}})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got.Status != StatusUnknown || !strings.Contains(got.Message, tt.wantMsg) {
				t.Errorf("got %+v, want Unknown mentioning %q", got, tt.wantMsg)
			}
		})
	}
}

func TestLuaGsubSemantics(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{`return ("hello world"):gsub("o", "0")`, "hell0 w0rld"},
		{`return ("hello world"):gsub("(%w+)", "<%1>")`, "<hello> <world>"},
		{`return ("hello"):gsub("l+", "%0%0")`, "hellllo"},
		{`return ("abc"):gsub("", "-")`, "-a-b-c-"},
		{`return ("abc"):gsub("%w", "%%")`, "%%%"},
		{`return ("a=1, b=2"):gsub("(%w+)=(%w+)", "%2=%1")`, "1=a, 2=b"},
		{`return ("$name is $age"):gsub("%$(%w+)", {name = "ann", age = 7})`, "ann is 7"},
		{`return ("$x $y"):gsub("%$(%w+)", {x = "1"})`, "1 $y"},
		{`return ("abc"):gsub("%w", function(c) return c:upper() .. "." end)`, "A.B.C."},
		{`return ("abc"):gsub("%w", function(c) if c == "b" then return false end return "x" end)`, "xbx"},
		{`return ("aaa"):gsub("a", "b", 2)`, "bba"},
		{`return ("hello"):gsub("()l", "%1")`, "he34o"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			script := "local r = (function() " + tt.script + " end)()\nreturn {status = \"Healthy\", message = r}"
			got, err := checkScript(t, script, true, nil)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: tt.want}); diff != "" {
				t.Errorf("Check (-got +want):\n%s", diff)
			}
		})
	}
}

func TestLuaTimeout(t *testing.T) {
	tests := []struct {
		name   string
		script string
		open   bool
	}{
		{"infinite loop", `while true do end`, false},
		{"loop swallowing errors", `while true do pcall(function() while true do end end) end`, false},
		{"loop inside a coroutine", `local co = coroutine.create(function() while true do end end); coroutine.resume(co)`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, Options{
				Timeout:   50 * time.Millisecond,
				LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: tt.script, UseOpenLibs: tt.open}},
			})
			got, err := e.Check(t.Context(), object("example.com/v1", "Widget"))
			if !errors.Is(err, ErrScriptTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Check = %+v, %v; want an error wrapping ErrScriptTimeout and context.DeadlineExceeded", got, err)
			}
			if !strings.Contains(err.Error(), "example.com/Widget") {
				t.Errorf("error %q does not name the check", err)
			}
			// The engine stays usable after a timeout.
			e2 := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: statusScript("Healthy", "")}}})
			if got, err := e2.Check(t.Context(), object("example.com/v1", "Widget")); err != nil || got.Status != StatusHealthy {
				t.Errorf("Check after timeout = %+v, %v", got, err)
			}
		})
	}
}

func TestLuaCallerContextCanceled(t *testing.T) {
	e := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: `while true do end`}}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := e.Check(ctx, object("example.com/v1", "Widget"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrScriptTimeout) {
		t.Fatalf("Check error = %v, want context.Canceled", err)
	}
}

func TestLuaObjectConversion(t *testing.T) {
	script := `
local parts = {}
table.insert(parts, type(obj.spec.replicas))
table.insert(parts, tostring(obj.spec.replicas + 1))
table.insert(parts, obj.status.conditions[1].type)
table.insert(parts, tostring(#obj.status.conditions))
table.insert(parts, tostring(obj.spec.paused))
table.insert(parts, tostring(obj.metadata.managedFields))
table.insert(parts, tostring(obj.spec.ratio))
return {status = "Healthy", message = table.concat(parts, " ")}`
	got, err := checkScript(t, script, false, map[string]any{
		"metadata": map[string]any{"name": "w", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec":     map[string]any{"replicas": int64(3), "paused": false, "ratio": 0.5},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready"}, map[string]any{"type": "Synced"}}},
	})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := &Result{Status: StatusHealthy, Message: "number 4 Ready 2 false nil 0.5"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Check (-got +want):\n%s", diff)
	}
}

// Null list items are dropped, as Argo CD's conversion drops them, so
// ipairs and # see every real item.
func TestLuaObjectListNulls(t *testing.T) {
	script := `
local types = {}
for _, c in ipairs(obj.status.conditions) do table.insert(types, c.type) end
return {status = "Healthy", message = #obj.status.conditions .. ":" .. table.concat(types, ",") .. ":" .. #obj.spec.empty}`
	got, err := checkScript(t, script, false, map[string]any{
		"spec":   map[string]any{"empty": []any{nil, nil}},
		"status": map[string]any{"conditions": []any{nil, map[string]any{"type": "Ready"}, nil, map[string]any{"type": "Synced"}}},
	})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if diff := cmp.Diff(got, &Result{Status: StatusHealthy, Message: "2:Ready,Synced:0"}); diff != "" {
		t.Errorf("Check (-got +want):\n%s", diff)
	}
}

// TestLuaStateDoesNotLeak runs a script that tampers with every shared
// thing it can reach, then checks on the same engine (so on the pooled
// state) that the next run sees none of it.
func TestLuaStateDoesNotLeak(t *testing.T) {
	tamper := `
leaked = "yes"
table.insert = nil
string.upper = function() return "tampered" end
getmetatable("").__index = {upper = function() return "tampered" end}
os.time = nil
require("os").date = nil
package.loaded.table = nil
_G.ipairs = nil
obj.metadata.name = "changed"
return {status = "Healthy"}`
	probe := `
local bad = {}
if leaked ~= nil then table.insert(bad, "global") end
if type(table.insert) ~= "function" then bad[#bad + 1] = "table.insert" end
if string.upper("a") ~= "A" then table.insert(bad, "string.upper") end
if ("a"):upper() ~= "A" then table.insert(bad, "string metatable") end
if os.time == nil then table.insert(bad, "os.time") end
if require("os").date == nil then table.insert(bad, "os.date") end
if ipairs == nil then table.insert(bad, "ipairs") end
return {status = "Healthy", message = table.concat(bad, ",")}`
	e := newEngine(t, Options{LuaChecks: []LuaCheck{
		{Group: "example.com", Kind: "Tamper", Script: tamper, UseOpenLibs: true},
		{Group: "example.com", Kind: "Probe", Script: probe, UseOpenLibs: true},
	}})
	tamperObj := object("example.com/v1", "Tamper")
	for range 20 {
		if got, err := e.Check(t.Context(), tamperObj); err != nil || got.Status != StatusHealthy {
			t.Fatalf("tamper Check = %+v, %v", got, err)
		}
		got, err := e.Check(t.Context(), object("example.com/v1", "Probe"))
		if err != nil {
			t.Fatalf("probe Check: %v", err)
		}
		if diff := cmp.Diff(got, &Result{Status: StatusHealthy}); diff != "" {
			t.Fatalf("probe saw leaked state (-got +want):\n%s", diff)
		}
	}
	if name := tamperObj.GetName(); name != "x" {
		t.Errorf("the script changed the Go object: name = %q", name)
	}
}

func TestConcurrentChecks(t *testing.T) {
	e := newEngine(t, Options{LuaChecks: []LuaCheck{
		{Group: "cert-manager.io", Kind: "Certificate", Script: certificateScript},
		{Group: "example.com", Kind: "Fail", Script: `error("boom")`},
	}})
	fixtures := []struct {
		obj  *unstructured.Unstructured
		want Status
	}{
		{loadFixture(t, "crd/ready.yaml"), StatusHealthy},
		{loadFixture(t, "crd/not-ready.yaml"), StatusDegraded},
		{loadFixture(t, "deployment/updating.yaml"), StatusProgressing},
		{loadFixture(t, "pod/crashloop.yaml"), StatusDegraded},
		{object("example.com/v1", "Fail"), StatusUnknown},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				f := fixtures[(g+i)%len(fixtures)]
				got, err := e.Check(t.Context(), f.obj)
				if err != nil {
					errs <- err
					return
				}
				if got.Status != f.want {
					errs <- fmt.Errorf("%s: got %s, want %s", f.obj.GetKind(), got.Status, f.want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Scripts whose every string stays under the bound but whose data grows
// without end (a table of tables, many 4 MB strings kept alive) are
// stopped by the memory budget with an error naming it, not by the
// process running out of memory. The timeout is long so that only the
// budget can stop them.
func TestLuaMemoryBudget(t *testing.T) {
	tests := []struct {
		name   string
		script string
		budget int64
	}{
		// Counted: the strings the run builds, whatever else allocates.
		{"strings kept alive", `local s = string.rep("x", 4e6); local t = {}; for i = 1, 1e6 do t[i] = s .. i end`, 64 << 20},
		{"strings thrown away", `local s = string.rep("x", 1e6); for i = 1, 1e6 do local u = s .. i end`, 64 << 20},
		{"json.encode results", `local json = require("json"); local s = string.rep("x", 3e6); for i = 1, 1e6 do local u = json.encode(s) end`, 64 << 20},
		{"json.decode input", `local json = require("json"); local s = json.encode(string.rep("x", 3e6)); for i = 1, 1e6 do local u = json.decode(s) end`, 64 << 20},
		// Not counted: the heap backstop (16 × 4 MiB) stops it.
		{"table growth", `local t = {}; for i = 1, 1e10 do t[i] = {i} end`, 4 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, Options{
				Timeout:      10 * time.Minute,
				MemoryBudget: tt.budget,
				LuaChecks:    []LuaCheck{{Group: "example.com", Kind: "Widget", Script: tt.script + "\nreturn {status = \"Healthy\"}", UseOpenLibs: true}},
			})
			got, err := e.Check(t.Context(), object("example.com/v1", "Widget"))
			want := fmt.Sprintf("example.com/Widget: health script exceeded its memory budget of %d MiB", tt.budget>>20)
			if !errors.Is(err, ErrScriptMemory) || !strings.Contains(fmt.Sprint(err), want) {
				t.Fatalf("Check = %+v, %v; want the memory budget error", got, err)
			}
			if errors.Is(err, ErrScriptTimeout) {
				t.Errorf("error %v also claims a timeout", err)
			}
			// The engine stays usable.
			e2 := newEngine(t, Options{LuaChecks: []LuaCheck{{Group: "example.com", Kind: "Widget", Script: statusScript("Healthy", "")}}})
			if got, err := e2.Check(t.Context(), object("example.com/v1", "Widget")); err != nil || got.Status != StatusHealthy {
				t.Errorf("Check after the budget error = %+v, %v", got, err)
			}
		})
	}
}

// The bounded `..` keeps Lua's semantics: numbers, right associativity,
// __concat metamethods on either side, and the error for other values.
func TestLuaConcatSemantics(t *testing.T) {
	tests := []struct {
		script string
		want   string
	}{
		{`return "a" .. 1 .. "b" .. 2.5`, "a1b2.5"},
		{`local t = setmetatable({}, {__concat = function(a, b) return "T" end}); return ("x" .. t) .. (t .. "y")`, "TT"},
		{`local ok, err = pcall(function() return "a" .. nil end); return tostring(ok) .. (string.find(err, "concat") and " concat" or " " .. err)`, "false concat"},
		{`local function f() return "in" .. "ner" end; local t = {k = "v" .. f()}; return t.k`, "vinner"},
	}
	for _, tt := range tests {
		got, err := checkScript(t, "local m = (function() "+tt.script+" end)()\nreturn {status = \"Healthy\", message = m}", true, nil)
		if err != nil || got.Message != tt.want {
			t.Errorf("%s: got %+v, %v; want message %q", tt.script, got, err, tt.want)
		}
	}
}
