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
