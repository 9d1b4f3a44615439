package reposervertest

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
)

// ServeChartRepo serves a Helm chart repository on loopback, laid out as
// `helm package` and `helm repo index` lay one out (chart archives and
// index.yaml, over plain HTTP), holding charts, and returns its URL.
func ServeChartRepo(tb testing.TB, charts ...*chart.Chart) string {
	tb.Helper()
	return ServePrivateChartRepo(tb, "", "", charts...)
}

// ServePrivateChartRepo is ServeChartRepo behind HTTP basic auth as user
// with password; an empty user serves everyone.
func ServePrivateChartRepo(tb testing.TB, user, password string, charts ...*chart.Chart) string {
	tb.Helper()
	dir := tb.TempDir()
	for _, c := range charts {
		if _, err := chartutil.Save(c, dir); err != nil {
			tb.Fatal(err)
		}
	}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); user != "" && (!ok || u != user || p != password) {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	idx, err := repo.IndexDirectory(dir, srv.URL)
	if err != nil {
		tb.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return srv.URL
}

// ConfigMapChart is chart name at version whose one template is a
// ConfigMap named name with the given data: templates such as
// `{{ .Values.mode | quote }}`, with values as the chart's defaults.
func ConfigMapChart(name, version string, data map[string]string, values map[string]any) *chart.Chart {
	tmpl := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n"
	for _, k := range slices.Sorted(maps.Keys(data)) {
		tmpl += "  " + k + ": " + data[k] + "\n"
	}
	return &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: name, Version: version},
		Values:    values,
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(tmpl)}},
	}
}
