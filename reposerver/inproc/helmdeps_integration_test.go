//go:build integration

package inproc_test

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// A chart in Git whose dependency lives in a private Helm repository
// renders with the credentials the request carries for that repository,
// and fails clearly without them.
func TestChartDependencyUsesRepositoryCredentials(t *testing.T) {
	lib := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "lib", Version: "1.2.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-lib\n")}},
	}
	chartsURL := reposervertest.ServePrivateChartRepo(t, "chart-bot", "chart-pw", lib)

	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 1.2.0\n  repository: " + chartsURL + "\n",
	})
	l := newLocal(t)
	req := reposerver.ManifestRequest{
		Repo: reposerver.Repository{URL: "file://" + dir}, Source: v1alpha1.ApplicationSource{Path: "app"}, AppName: "shop",
	}
	if _, err := l.GenerateManifests(t.Context(), req); err == nil || strings.Contains(err.Error(), "chart-pw") {
		t.Fatalf("without credentials: err = %v; want a failure that shows no password", err)
	}
	req.NoCache = true // the failure above is cached briefly
	req.HelmRepos = []reposerver.Repository{{URL: chartsURL, Type: reposerver.RepoTypeHelm, Credentials: &git.Credentials{Username: "chart-bot", Password: "chart-pw"}}}
	res, err := l.GenerateManifests(t.Context(), req)
	if err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	if len(res.Manifests) != 1 || res.Manifests[0].GetName() != "shop-lib" {
		t.Fatalf("manifests = %v, want the dependency's ConfigMap shop-lib", res.Manifests)
	}
}
