package diff_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

func secretObject(data, stringData map[string]any, lastApplied string) *unstructured.Unstructured {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "creds", "namespace": "prod"},
	}
	if data != nil {
		obj["data"] = data
	}
	if stringData != nil {
		obj["stringData"] = stringData
	}
	if lastApplied != "" {
		obj["metadata"].(map[string]any)["annotations"] = map[string]any{diff.LastAppliedAnnotation: lastApplied}
	}
	return &unstructured.Unstructured{Object: obj}
}

// TestSecretValuesNeverLeak plants random values in every place a Secret
// value can hide and searches every output for them.
func TestSecretValuesNeverLeak(t *testing.T) {
	secret := func() string {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return "pw-" + hex.EncodeToString(b)
	}
	oldVal, newVal, same := secret(), secret(), secret()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	applied, err := json.Marshal(secretObject(nil, map[string]any{"password": oldVal, "same": same}, "").Object)
	if err != nil {
		t.Fatal(err)
	}
	desired := secretObject(nil, map[string]any{"password": newVal, "same": same}, "")
	live := secretObject(map[string]any{"password": b64(oldVal), "same": b64(same)}, nil, string(applied))
	forbidden := []string{oldVal, newVal, same, b64(oldVal), b64(newVal), b64(same)}

	check := func(where, out string) {
		t.Helper()
		for _, s := range forbidden {
			if strings.Contains(out, s) {
				t.Errorf("%s contains a secret value", where)
			}
		}
	}
	dump := func(u *unstructured.Unstructured) string {
		if u == nil {
			return ""
		}
		b, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rules := []diff.IgnoreRule{{Kind: "Secret", JQPathExpressions: []string{`.data[] | select(. == 1)`, `.nope[]`}}}
	d := newDiffer(t, diff.Options{Ignore: rules})
	cases := []struct {
		name          string
		desired, live *unstructured.Unstructured
		modified      bool
	}{
		{name: "changed", desired: desired, live: live, modified: true},
		{name: "unchanged", desired: secretObject(map[string]any{"password": b64(oldVal), "same": b64(same)}, nil, ""), live: live},
		{name: "missing", desired: desired, modified: true},
		{name: "extraneous", live: live, modified: true},
	}
	for _, tc := range cases {
		res, err := d.Diff(t.Context(), tc.desired, tc.live)
		if err != nil {
			check(tc.name+" error", err.Error())
			t.Fatalf("%s: %v", tc.name, err)
		}
		if res.Modified != tc.modified {
			t.Errorf("%s: Modified = %v, want %v", tc.name, res.Modified, tc.modified)
		}
		check(tc.name+" Text", res.Text)
		check(tc.name+" Result.Desired", dump(res.Desired))
		check(tc.name+" Result.Live", dump(res.Live))
		check(tc.name+" Result", fmt.Sprintf("%+v", *res))
	}

	res, err := d.Diff(t.Context(), desired, live)
	if err != nil {
		t.Fatal(err)
	}
	// the diff still shows which key changed: password masks differ, same's agree
	for _, want := range []string{`-  password: "+++++++++"`, `+  password: "++++++++"`, `   same: "++++++++"`} {
		if !strings.Contains(res.Text, want+"\n") {
			t.Errorf("Text lacks %q:\n%s", want, res.Text)
		}
	}

	hd, hl := diff.HideSecretData(desired, live)
	check("HideSecretData desired", dump(hd))
	check("HideSecretData live", dump(hl))
	ann := hl.GetAnnotations()[diff.LastAppliedAnnotation]
	var la map[string]any
	if err := json.Unmarshal([]byte(ann), &la); err != nil {
		t.Fatalf("masked last-applied is not JSON: %v", err)
	}
	if got := la["data"].(map[string]any)["same"]; got != hl.Object["data"].(map[string]any)["same"] {
		t.Errorf("masked last-applied 'same' = %v, want the live mask", got)
	}
	if strings.Contains(dump(live), "+++") {
		t.Error("HideSecretData modified its input")
	}
}

// TestModifiedSecretShowsKey: a Secret found modified always shows which
// key differs, even where the two values would once have shared a mask,
// and never shows a value.
func TestModifiedSecretShowsKey(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	la := func(obj *unstructured.Unstructured) string {
		b, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	applied := secretObject(map[string]any{"api-key": b64("k3y-0ld"), "same": b64("s4me")}, nil, "")
	tests := []struct {
		name          string
		desired, live *unstructured.Unstructured
		key           string // the key a changed line must name
		hidden        []string
	}{
		{
			name:    "a number against an empty string",
			desired: secretObject(map[string]any{"api-key": int64(7), "same": b64("s4me")}, nil, ""),
			live:    secretObject(map[string]any{"api-key": "", "same": b64("s4me")}, nil, ""),
			key:     "api-key",
		},
		{
			name:    "an empty value against a missing key",
			desired: secretObject(map[string]any{"api-key": "", "same": b64("s4me")}, nil, ""),
			live:    secretObject(map[string]any{"same": b64("s4me")}, nil, ""),
			key:     "api-key", hidden: []string{b64("s4me")},
		},
		{
			name:    "a null stringData value against a set live value",
			desired: secretObject(map[string]any{"same": b64("s4me")}, map[string]any{"api-key": nil}, ""),
			live:    secretObject(map[string]any{"api-key": b64("k3y-0ld"), "same": b64("s4me")}, nil, ""),
			key:     "api-key", hidden: []string{b64("k3y-0ld"), b64("s4me")},
		},
		{
			name:    "a key removed from Git since the last apply",
			desired: secretObject(map[string]any{"same": b64("s4me")}, nil, ""),
			live:    secretObject(map[string]any{"api-key": b64("k3y-0ld"), "same": b64("s4me")}, nil, la(applied)),
			key:     "api-key", hidden: []string{b64("k3y-0ld"), b64("s4me"), "k3y-0ld"},
		},
		{
			name:    "data that is not a map",
			desired: secretObject(nil, nil, ""),
			live:    secretObject(nil, nil, ""),
			key:     "data", hidden: []string{b64("k3y-n3w"), b64("k3y-0ld")},
		},
	}
	tests[4].desired.Object["data"] = b64("k3y-n3w")
	tests[4].live.Object["data"] = b64("k3y-0ld")
	d := newDiffer(t, diff.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, call := range [][]diff.CallOption{nil, {diff.WithServerSide(true)}} {
				res, err := d.Diff(t.Context(), tt.desired, tt.live, call...)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Modified {
					t.Fatalf("server-side %v: not modified", call != nil)
				}
				named := false
				for _, line := range strings.Split(res.Text, "\n")[2:] {
					if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && strings.HasPrefix(strings.TrimLeft(line[1:], " "), tt.key+":") {
						named = true
					}
				}
				if !named {
					t.Errorf("server-side %v: no changed line names %q:\n%s", call != nil, tt.key, res.Text)
				}
				for _, s := range tt.hidden {
					if strings.Contains(res.Text, s) {
						t.Errorf("server-side %v: the diff shows a Secret value:\n%s", call != nil, res.Text)
					}
				}
			}
		})
	}
}
