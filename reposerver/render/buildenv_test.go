package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestBuildEnv(t *testing.T) {
	req := Request{
		Path:        "apps/web",
		Source:      v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/r.git", TargetRevision: "main"},
		AppName:     "web",
		Project:     "team-a",
		Revision:    "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8",
		Namespace:   "prod",
		KubeVersion: "v1.37.2+k3s1",
		APIVersions: []string{"apps/v1", "v1"},
	}
	want := BuildEnv{
		"ARGOCD_APP_NAME":                   "web",
		"ARGOCD_APP_NAMESPACE":              "prod",
		"ARGOCD_APP_PROJECT_NAME":           "team-a",
		"ARGOCD_APP_REVISION":               "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8",
		"ARGOCD_APP_REVISION_SHORT":         "f913b6c",
		"ARGOCD_APP_REVISION_SHORT_8":       "f913b6cb",
		"ARGOCD_APP_SOURCE_PATH":            "apps/web",
		"ARGOCD_APP_SOURCE_REPO_URL":        "https://git.example.com/r.git",
		"ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
		"KUBE_VERSION":                      "1.37.2",
		"KUBE_API_VERSIONS":                 "apps/v1,v1",
	}
	env := req.BuildEnv()
	if diff := cmp.Diff(env, want); diff != "" {
		t.Errorf("BuildEnv (-got +want):\n%s", diff)
	}
	for name := range env {
		found := false
		for _, n := range BuildEnvNames {
			found = found || n == name
		}
		if !found {
			t.Errorf("%s is not in BuildEnvNames", name)
		}
	}
	if len(env) != len(BuildEnvNames) {
		t.Errorf("BuildEnv has %d names, BuildEnvNames %d", len(env), len(BuildEnvNames))
	}

	req.Revision = ""
	if got := req.BuildEnv()["ARGOCD_APP_REVISION"]; got != "main" {
		t.Errorf("ARGOCD_APP_REVISION without a resolved revision = %q, want the target revision", got)
	}

	for in, out := range map[string]string{
		"$ARGOCD_APP_NAME-${KUBE_VERSION}": "web-1.37.2",
		"$$ARGOCD_APP_NAME":                "$ARGOCD_APP_NAME",
		"$UNKNOWN|${HOME}|plain":           "||plain",
		"no dollar":                        "no dollar",
	} {
		if got := env.Expand(in); got != out {
			t.Errorf("Expand(%q) = %q, want %q", in, got, out)
		}
	}
}
