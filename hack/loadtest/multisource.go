package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The multi-source workload (--multi-source): each app is the reference
// ConfigMap rendered by one chart of a Helm chart repository, with the
// app's values from the Git repository (a ref source and a $values value
// file), as Argo CD users write it.

const (
	chartName    = "loadtest-cm"
	chartVersion = "1.0.0"
)

// cmTemplate renders the reference ConfigMap from .Values.data.
const cmTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: config
  namespace: {{ .Release.Namespace }}
data:
{{- range $k, $v := .Values.data }}
  {{ $k }}: {{ $v | quote }}
{{- end }}
`

// serveCharts serves a chart repository holding the workload's chart on
// loopback and returns its URL.
func serveCharts(base string) (string, func(), error) {
	dir := filepath.Join(base, "charts")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", nil, err
	}
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: chartName, Version: chartVersion},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(cmTemplate)}},
	}
	if _, err := chartutil.Save(ch, dir); err != nil {
		return "", nil, err
	}
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	url := "http://" + l.Addr().String()
	idx, err := repo.IndexDirectory(dir, url)
	if err != nil {
		return "", nil, err
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o600); err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	return url, func() { _ = hs.Close() }, nil
}

// valuesYAML is app i's values: the reference ConfigMap's data, each
// value prefixed with gen.
func valuesYAML(gen string) string {
	var b strings.Builder
	b.WriteString("data:\n")
	for k := range 20 {
		fmt.Fprintf(&b, "  key-%02d: %q\n", k, gen+strings.Repeat(strconv.Itoa(k%10), 100))
	}
	return b.String()
}

// writeValues writes every app's values file under work/values.
func writeValues(work string, apps int, gen string) error {
	dir := filepath.Join(work, "values")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	content := []byte(valuesYAML(gen))
	for i := range apps {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("app-%04d.yaml", i)), content, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// multiSourceSpec is the sources of app ns: the chart, with its values
// from the Git repository.
func multiSourceSpec(chartsURL, repoURL, ns string) []any {
	return []any{
		map[string]any{
			"repoURL": chartsURL, "chart": chartName, "targetRevision": chartVersion,
			"helm": map[string]any{"releaseName": ns, "valueFiles": []any{"$values/values/" + ns + ".yaml"}},
		},
		map[string]any{"repoURL": repoURL, "targetRevision": "main", "ref": "values"},
	}
}

// pushValues changes every app's values in the repository's working copy
// base/repo-work, commits, pushes to the served bare repository and
// returns the new commit.
func pushValues(base string, apps int) (string, error) {
	if err := writeValues(filepath.Join(base, "repo-work"), apps, "pushed-"); err != nil {
		return "", err
	}
	return commitAndPush(base, "values")
}

// postPush tells graphcd's webhook that repoURL's main branch moved, as
// GitHub does (unsigned: the workload configures no webhook secret).
func postPush(ctx context.Context, listen, repoURL, sha string) error {
	body, err := json.Marshal(map[string]any{
		"ref": "refs/heads/main", "after": sha,
		"repository": map[string]any{"html_url": repoURL, "clone_url": repoURL, "default_branch": "main"},
	})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+listen+"/api/webhook", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", "push")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook: %s: %s", resp.Status, b)
	}
	return nil
}

// metricValue reads one series of graphcd's /metrics at listen (the sum
// of its labelled series); one it does not serve is an error.
func metricValue(ctx context.Context, listen, name string) (float64, error) {
	v, found, err := metricOf(ctx, "http://"+listen+"/metrics", name)
	if err == nil && !found {
		err = fmt.Errorf("/metrics has no %s", name)
	}
	return v, err
}

// waitRevision waits until every app of namespace ns is Synced and
// Healthy at sha (a multi-source app: with its last source, the values,
// at sha).
func waitRevision(ctx context.Context, cluster *localcluster.Cluster, ns string, apps int, sha string) error {
	_, _, err := waitApps(ctx, cluster, appsGVR, ns, time.Now(), apps, func(a *unstructured.Unstructured) bool { return atRevision(a, sha) }, nil)
	return err
}

func atRevision(a *unstructured.Unstructured, sha string) bool {
	sync, _, _ := unstructuredString(a.Object, "status", "sync", "status")
	h, _, _ := unstructuredString(a.Object, "status", "health", "status")
	if sync != "Synced" || h != "Healthy" {
		return false
	}
	if revs, ok, _ := unstructured.NestedStringSlice(a.Object, "status", "sync", "revisions"); ok {
		return len(revs) > 0 && revs[len(revs)-1] == sha // multi-source: the values come last
	}
	rev, _, _ := unstructuredString(a.Object, "status", "sync", "revision")
	return rev == sha
}

// valuesPush reports the multi-source syncs, then pushes new values for
// every app, posts the push to the webhook and times the re-syncs,
// counting the renders they took.
func valuesPush(ctx context.Context, cluster *localcluster.Cluster, listen, repoURL string, o options, first, all time.Duration, cpuAll, clusterAll float64, peak int64, steady float64) error {
	renders, err := metricValue(ctx, listen, "graphcd_repo_renders_total")
	if err != nil {
		return err
	}
	sha, err := pushValues(cluster.Dir, o.apps)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := postPush(ctx, listen, repoURL, sha); err != nil {
		return err
	}
	if err := waitRevision(ctx, cluster, "graphcd", o.apps, sha); err != nil {
		return err
	}
	pushed := time.Since(start)
	after, err := metricValue(ctx, listen, "graphcd_repo_renders_total")
	if err != nil {
		return err
	}
	fmt.Printf("| %d | multi-source | %.1f s | %.1f s | %.1f CPU-s | %.1f CPU-s | %d MiB | %.1f mCPU | %.1f s | %.2f |\n",
		o.apps, first.Seconds(), all.Seconds(), cpuAll, clusterAll, peak>>20, steady, pushed.Seconds(), (after-renders)/float64(o.apps))
	return nil
}
