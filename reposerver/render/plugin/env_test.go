package plugin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func ptr[T any](v T) *T { return &v }

func TestEnviron(t *testing.T) {
	t.Setenv("SECRET", "hunter2")
	t.Setenv("PASSED", "yes")
	spec := envSpec{
		path: "/bin",
		home: "/work/home",
		build: map[string]string{
			"ARGOCD_APP_NAME":      "guestbook",
			"ARGOCD_APP_NAMESPACE": "prod",
			"KUBE_VERSION":         "1.37.2",
		},
		user: []v1alpha1.EnvEntry{
			{Name: "FOO", Value: "bar"},
			{Name: "PATH", Value: "/evil"},
			{Name: "LD_PRELOAD", Value: "/evil.so"},
			{Name: "REF", Value: "app-$ARGOCD_APP_NAME-${KUBE_VERSION}-$SECRET-$$"},
		},
		parameters: []v1alpha1.ApplicationSourcePluginParameter{
			{Name: "values-files", Array: []string{"a.yaml", "b.yaml"}},
			{Name: "helm-parameters", Map: map[string]string{"image.tag": "v1.2.3"}},
			{Name: "mode", String: ptr("fast")},
		},
		passed: passEnv([]string{"PASSED", "UNSET_VARIABLE"}),
	}
	got, err := spec.environ()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`ARGOCD_APP_NAME=guestbook`,
		`ARGOCD_APP_NAMESPACE=prod`,
		`ARGOCD_APP_PARAMETERS=[{"name":"values-files","array":["a.yaml","b.yaml"]},{"name":"helm-parameters","map":{"image.tag":"v1.2.3"}},{"name":"mode","string":"fast"}]`,
		`ARGOCD_ENV_FOO=bar`,
		`ARGOCD_ENV_LD_PRELOAD=/evil.so`,
		`ARGOCD_ENV_PATH=/evil`,
		`ARGOCD_ENV_REF=app-guestbook-1.37.2--$`,
		`GRAPHCD_ENV_FOO=bar`,
		`GRAPHCD_ENV_LD_PRELOAD=/evil.so`,
		`GRAPHCD_ENV_PATH=/evil`,
		`GRAPHCD_ENV_REF=app-guestbook-1.37.2--$`,
		`HOME=/work/home`,
		`KUBE_VERSION=1.37.2`,
		`PARAM_HELM_PARAMETERS_IMAGE_TAG=v1.2.3`,
		`PARAM_MODE=fast`,
		`PARAM_VALUES_FILES_0=a.yaml`,
		`PARAM_VALUES_FILES_1=b.yaml`,
		`PASSED=yes`,
		`PATH=/bin`,
		`TMPDIR=/work/home`,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("environ() (-got +want):\n%s", diff)
	}
	for _, kv := range got {
		if strings.Contains(kv, "hunter2") {
			t.Errorf("environ() leaks the server's SECRET: %q", kv)
		}
	}
}

// TestEnvironNothingFromServer checks that with nothing passed through, no
// variable of the test process other than PATH reaches a command.
func TestEnvironNothingFromServer(t *testing.T) {
	t.Setenv("SECRET", "hunter2")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "key")
	got, err := envSpec{home: "/h"}.environ()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"HOME=/h", "PATH=" + defaultPath, "TMPDIR=/h"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("environ() (-got +want):\n%s", diff)
	}
}

func TestEnvironRejects(t *testing.T) {
	tests := []struct {
		name string
		spec envSpec
	}{
		{"build name not Argo CD's", envSpec{build: map[string]string{"LD_PRELOAD": "/x.so"}}},
		{"build PATH", envSpec{build: map[string]string{"PATH": "/x"}}},
		{"user name with =", envSpec{user: []v1alpha1.EnvEntry{{Name: "A=B", Value: "x"}}}},
		{"empty user name", envSpec{user: []v1alpha1.EnvEntry{{Name: "", Value: "x"}}}},
		{"NUL in value", envSpec{user: []v1alpha1.EnvEntry{{Name: "A", Value: "x\x00y"}}}},
		{"NUL in parameter", envSpec{parameters: []v1alpha1.ApplicationSourcePluginParameter{{Name: "p", String: ptr("\x00")}}}},
	}
	for _, tt := range tests {
		if env, err := tt.spec.environ(); err == nil {
			t.Errorf("%s: environ() = %q, want an error", tt.name, env)
		}
	}
}

func TestParamEnv(t *testing.T) {
	tests := []struct {
		name  string
		param v1alpha1.ApplicationSourcePluginParameter
		want  map[string]string
	}{
		{"string", v1alpha1.ApplicationSourcePluginParameter{Name: "some-string-param", String: ptr("v")},
			map[string]string{"PARAM_SOME_STRING_PARAM": "v"}},
		{"array", v1alpha1.ApplicationSourcePluginParameter{Name: "some-array-param", Array: []string{"item1", "item2"}},
			map[string]string{"PARAM_SOME_ARRAY_PARAM_0": "item1", "PARAM_SOME_ARRAY_PARAM_1": "item2"}},
		{"map", v1alpha1.ApplicationSourcePluginParameter{Name: "some-map-param", Map: map[string]string{"image.tag": "v1.2.3"}},
			map[string]string{"PARAM_SOME_MAP_PARAM_IMAGE_TAG": "v1.2.3"}},
		{"odd characters", v1alpha1.ApplicationSourcePluginParameter{Name: "a.b c/ü", String: ptr("x")},
			map[string]string{"PARAM_A_B_C___": "x"}},
		{"empty string", v1alpha1.ApplicationSourcePluginParameter{Name: "e", String: ptr("")},
			map[string]string{"PARAM_E": ""}},
		{"unset", v1alpha1.ApplicationSourcePluginParameter{Name: "u"}, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(paramEnv(tt.param), tt.want); diff != "" {
				t.Errorf("paramEnv() (-got +want):\n%s", diff)
			}
		})
	}
}

// TestParametersJSON pins ARGOCD_APP_PARAMETERS to Argo CD's shape,
// including empty collections that must survive.
func TestParametersJSON(t *testing.T) {
	got, err := envSpec{parameters: []v1alpha1.ApplicationSourcePluginParameter{
		{Name: "empty-array", Array: []string{}},
		{Name: "empty-map", Map: map[string]string{}},
	}}.environ()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "ARGOCD_APP_PARAMETERS=") })
	if i < 0 {
		t.Fatalf("no ARGOCD_APP_PARAMETERS in %q", got)
	}
	var params []map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got[i], "ARGOCD_APP_PARAMETERS=")), &params); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"name": "empty-array", "array": []any{}}, {"name": "empty-map", "map": map[string]any{}}}
	if diff := cmp.Diff(params, want); diff != "" {
		t.Errorf("ARGOCD_APP_PARAMETERS (-got +want):\n%s", diff)
	}
}
