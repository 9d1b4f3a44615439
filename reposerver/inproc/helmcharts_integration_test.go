//go:build integration

package inproc_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/render/kustomize"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// A kustomization's helmCharts inflate in process with graphcd's Helm
// renderer when kustomize.buildOptions say --enable-helm: the chart comes
// from a private chart repository with that repository's credentials
// (which the request must carry, as for remote bases) and renders the
// same objects a Helm source of the same chart and values does; a chart
// in the kustomization's chart home needs no pull. Without --enable-helm
// the kustomization is refused, as kustomize refuses it.
func TestGenerateManifestsKustomizeHelmCharts(t *testing.T) {
	chart := reposervertest.ConfigMapChart("web", "1.0.0",
		map[string]string{"replicas": "{{ .Values.replicas | quote }}", "mode": "{{ .Values.mode }}", "release": "{{ .Release.Name }}/{{ .Release.Namespace }}"},
		map[string]any{"replicas": 1, "mode": "default"})
	charts := reposervertest.ServePrivateChartRepo(t, "charts", "chart-pw", chart)
	chartRepo := reposerver.Repository{URL: charts, Type: reposerver.RepoTypeHelm, Credentials: &reposerver.Credentials{Username: "charts", Password: "chart-pw"}}
	helmCharts := "helmCharts:\n- name: web\n  repo: " + charts + "\n  version: 1.0.0\n  releaseName: web\n  namespace: demo\n" +
		"  valuesFile: values.yaml\n  valuesInline:\n    replicas: 4\n"
	gitURL, _ := newRepoWith(t, map[string]string{
		"inflate/kustomization.yaml":              helmCharts,
		"inflate/values.yaml":                     "replicas: 2\nmode: from-file\n",
		"prefixed/kustomization.yaml":             "namePrefix: prod-\n" + strings.ReplaceAll(helmCharts, "valuesFile: values.yaml", "valuesFile: ../inflate/values.yaml"),
		"local/kustomization.yaml":                "helmCharts:\n- name: vendored\n  releaseName: v\n",
		"local/charts/vendored/Chart.yaml":        "apiVersion: v2\nname: vendored\nversion: 0.1.0\n",
		"local/charts/vendored/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: vendored-{{ .Release.Name }}\n",
	})
	l := newLocal(t)
	request := func(path, buildOptions string, repos ...reposerver.Repository) reposerver.ManifestRequest {
		return reposerver.ManifestRequest{
			Repo:    reposerver.Repository{URL: gitURL},
			Source:  v1alpha1.ApplicationSource{RepoURL: gitURL, Path: path, TargetRevision: "main"},
			AppName: "app", Namespace: "demo", Repos: repos,
			Tools: reposerver.ToolOptions{KustomizeBuildOptions: buildOptions},
		}
	}

	if _, err := l.GenerateManifests(t.Context(), request("inflate", "")); !strings.Contains(errString(err), "--enable-helm") {
		t.Errorf("helmCharts without --enable-helm: err = %v, want a refusal naming --enable-helm", err)
	}
	_, err := l.GenerateManifests(t.Context(), request("inflate", "--enable-helm"))
	var needed *reposerver.RepositoriesNeededError
	if !errors.As(err, &needed) || !slices.Equal(needed.URLs, []string{charts}) {
		t.Fatalf("helmCharts without the chart repository: err = %v, want RepositoriesNeededError{%s}", err, charts)
	}
	if _, err := l.GenerateManifests(t.Context(), request("inflate", "--enable-helm", reposerver.Repository{URL: charts, Type: reposerver.RepoTypeHelm})); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("helmCharts without the chart repository's credentials: err = %v, want 401", err)
	}

	res, err := l.GenerateManifests(t.Context(), request("inflate", "--enable-helm", chartRepo))
	if err != nil {
		t.Fatalf("helmCharts: %v", err)
	}
	// The Helm source of the same chart and values renders the same.
	raw := []byte(`{"replicas": 4, "mode": "from-file"}`)
	helmRes, err := l.GenerateManifests(t.Context(), reposerver.ManifestRequest{
		Repo: chartRepo,
		Source: v1alpha1.ApplicationSource{RepoURL: charts, Chart: "web", TargetRevision: "1.0.0",
			Helm: &v1alpha1.ApplicationSourceHelm{ReleaseName: "web", ValuesObject: &runtime.RawExtension{Raw: raw}}},
		AppName: "web", Namespace: "demo",
	})
	if err != nil {
		t.Fatalf("Helm source: %v", err)
	}
	if diff := cmp.Diff(objects(res.Manifests), objects(helmRes.Manifests)); diff != "" {
		t.Errorf("helmCharts vs the Helm source (-kustomize +helm):\n%s", diff)
	}
	if got := objects(res.Manifests)[0]["data"]; !cmp.Equal(got, map[string]any{"replicas": "4", "mode": "from-file", "release": "web/demo"}) {
		t.Errorf("inflated data = %v", got)
	}

	// The kustomization's transformers apply to the inflated objects.
	res, err = l.GenerateManifests(t.Context(), request("prefixed", "--enable-helm", chartRepo))
	if err != nil {
		t.Fatalf("helmCharts with namePrefix: %v", err)
	}
	if len(res.Manifests) != 1 || res.Manifests[0].GetName() != "prod-web" {
		t.Errorf("helmCharts with namePrefix: objects %v, want prod-web", objects(res.Manifests))
	}

	// A chart in the chart home is used as it is.
	res, err = l.GenerateManifests(t.Context(), request("local", "--enable-helm"))
	if err != nil {
		t.Fatalf("vendored chart: %v", err)
	}
	if len(res.Manifests) != 1 || res.Manifests[0].GetName() != "vendored-v" {
		t.Errorf("vendored chart: objects %v, want vendored-v", objects(res.Manifests))
	}

	for _, tc := range []struct {
		name, buildOptions string
		want               string
	}{
		{"an exec plugin flag", "--enable-helm --enable-exec", "--enable-exec is refused"},
		{"an unknown flag", "--enable-helm --frobnicate", "--frobnicate is not a flag"},
	} {
		if _, err := l.GenerateManifests(t.Context(), request("inflate", tc.buildOptions, chartRepo)); !strings.Contains(errString(err), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	versioned := request("local", "--enable-helm")
	versioned.Source.Kustomize = &v1alpha1.ApplicationSourceKustomize{Version: "v5.4.3"}
	if _, err := l.GenerateManifests(t.Context(), versioned); !strings.Contains(errString(err), "kustomize version v5.4.3 is not available: graphcd renders with its built-in kustomize (sigs.k8s.io/kustomize/api "+kustomize.BuiltinVersion()) {
		t.Errorf("a kustomize version: err = %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// objects are the objects' contents, for comparing.
func objects(objs []*unstructured.Unstructured) []map[string]any {
	out := make([]map[string]any, len(objs))
	for i, o := range objs {
		out[i] = o.Object
	}
	return out
}
