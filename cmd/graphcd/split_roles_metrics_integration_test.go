//go:build integration

package main

// This file sorts after server_integration_test.go on purpose: it installs
// the CRDs (see shard_integration_test.go).

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// The roles split as processes — repo-server, controller and server,
// sharing a real Redis, all with --metrics-argocd-names — each serve on
// /metrics, after a real automated sync, every family docs/metrics.md
// gives them with its documented labels, and the Argo CD twins of those
// Argo CD has, parsed with Prometheus' text parser.
func TestSplitRolesServeTheirMetrics(t *testing.T) {
	env := newShardEnv(t)
	rdb, err := localredis.Start(t.Context())
	if err != nil {
		t.Fatalf("start redis: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Stop() })
	dir := t.TempDir()
	secret := filepath.Join(dir, "redis.key")
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	// Hex: graphcd trims the file's white space, which raw bytes may
	// start or end with.
	if err := os.WriteFile(secret, []byte(hex.EncodeToString(key)), 0o600); err != nil {
		t.Fatal(err)
	}
	redisURL := "redis://:" + rdb.Password + "@" + rdb.Addr

	repoAddr, repoMetrics := freeAddr(t), freeAddr(t)
	repo := exec.CommandContext(t.Context(), env.bin, "repo-server", "--listen", repoAddr, "--plaintext",
		"--redis", redisURL, "--metrics-listen", repoMetrics, "--metrics-argocd-names")
	repo.Env = binaryEnv()
	if err := repo.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = repo.Process.Kill(); _ = repo.Wait() })

	ctl := env.start(t, "--repo-server-addr", repoAddr, "--repo-server-plaintext", "--metrics-argocd-names",
		"--redis", redisURL, "--redis-secret-file", secret)

	dest := cluster.Namespace(t)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "roles-metrics", Namespace: shardNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: env.repoURL, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		},
	}
	if err := env.apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.apps.Delete(context.Background(), app) })
	poll(t, "the app to sync", func() (bool, string) {
		var got v1alpha1.Application
		if err := env.apps.Get(t.Context(), client.ObjectKeyFromObject(app), &got); err != nil {
			return false, err.Error()
		}
		st := got.Status.OperationState
		return got.Status.Sync.Status == v1alpha1.SyncStatusCodeSynced && st != nil && st.Phase == v1alpha1.OperationSucceeded,
			"status " + string(got.Status.Sync.Status)
	})

	srvBase := startServer(t, env.bin, "--controller=false", "--repo-server-addr", repoAddr, "--repo-server-plaintext",
		"--metrics-argocd-names", "--redis", redisURL, "--redis-secret-file", secret)
	post(t, srvBase+"/api/graphql", `{"query":"query RolesMetrics { version { version } }"}`)
	post(t, srvBase+"/auth/login", `{"username":"admin","password":"not the password"}`)

	for _, role := range []struct {
		name, url string
		want      map[string][]string // family: its labels
	}{
		{"repo-server", "http://" + repoMetrics, map[string][]string{
			"graphcd_git_request_total":            {"repo", "request_type"},
			"graphcd_git_request_duration_seconds": {"repo", "request_type"},
			"graphcd_repo_pending_request_total":   {"repo"},
			"graphcd_repo_renders_total":           nil,
			"graphcd_repo_render_duration_seconds": {"failed"},
			"graphcd_redis_request_total":          {"failed", "initiator"},
			"graphcd_redis_request_duration":       {"initiator"},
			"go_goroutines":                        nil,
		}},
		{"controller", ctl.base, map[string][]string{
			"graphcd_app_info":              {"autosync_enabled", "dest_namespace", "dest_server", "health_status", "name", "namespace", "operation", "project", "repo", "sync_status"},
			"graphcd_app_sync_total":        {"dest_server", "dry_run", "name", "namespace", "phase", "project"},
			"graphcd_app_reconcile":         {"dest_server", "namespace"},
			"graphcd_app_k8s_request_total": {"dry_run", "name", "namespace", "project", "resource_kind", "resource_namespace", "response_code", "server", "verb"},
			"graphcd_cluster_info":          {"k8s_version", "name", "server"},
			"graphcd_redis_request_total":   {"failed", "initiator"},
		}},
		{"server", srvBase, map[string][]string{
			"graphcd_graphql_requests_total":           {"failed", "operation", "type"},
			"graphcd_graphql_request_duration_seconds": {"operation", "type"},
			"graphcd_websocket_subscribers":            nil,
			"graphcd_login_request_total":              {"status"},
			"graphcd_redis_request_total":              {"failed", "initiator"},
			"graphcd_http_requests_total":              {"code", "method", "route"},
		}},
	} {
		families := scrape(t, role.url+"/metrics")
		for name, labels := range role.want {
			checkFamily(t, role.name, families, name, labels)
			if twin, ok := strings.CutPrefix(name, "graphcd_"); ok && argoCDTwin(twin) {
				checkFamily(t, role.name, families, "argocd_"+twin, labels)
			}
		}
	}
	// The counts say what happened: the sync fetched from the repository
	// and wrote the app's ConfigMap, the login failed, the query (of a
	// caller not logged in, so under "(other)") ran.
	repoFams := scrape(t, "http://"+repoMetrics+"/metrics")
	if !hasSeries(repoFams["graphcd_git_request_total"], map[string]string{"repo": env.repoURL, "request_type": "fetch"}) {
		t.Errorf("repo-server: no fetch of %s in graphcd_git_request_total", env.repoURL)
	}
	ctlFams := scrape(t, ctl.base+"/metrics")
	if !hasSeries(ctlFams["graphcd_app_k8s_request_total"], map[string]string{"name": app.Name, "project": "default", "resource_kind": "configmaps", "resource_namespace": dest, "verb": "create"}) {
		t.Errorf("controller: no create of a ConfigMap by %s in graphcd_app_k8s_request_total", app.Name)
	}
	srvFams := scrape(t, srvBase+"/metrics")
	if !hasSeries(srvFams["graphcd_login_request_total"], map[string]string{"status": "failure"}) {
		t.Errorf("server: the failed login is not counted: %v", srvFams["graphcd_login_request_total"].GetMetric())
	}
	if !hasSeries(srvFams["graphcd_graphql_requests_total"], map[string]string{"operation": "(other)", "type": "query"}) {
		t.Errorf("server: the query is not counted: %v", srvFams["graphcd_graphql_requests_total"].GetMetric())
	}
}

// argoCDTwin reports whether the family (after graphcd_) has an argocd_
// twin in compatibility mode.
func argoCDTwin(name string) bool {
	return slices.Contains([]string{"app_info", "app_sync_total", "app_reconcile", "app_k8s_request_total", "cluster_info",
		"git_request_total", "git_request_duration_seconds", "repo_pending_request_total",
		"redis_request_total", "redis_request_duration", "login_request_total"}, name)
}

// freeAddr is localcluster.FreeAddr for a test.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// startServer runs `graphcd server --insecure` with args and returns its
// base URL once it serves.
func startServer(t *testing.T, bin string, args ...string) string {
	t.Helper()
	srv := exec.CommandContext(t.Context(), bin, append([]string{"server", "--insecure", "--listen", "127.0.0.1:0",
		"--kubeconfig", cluster.Kubeconfig, "--namespace", shardNamespace}, args...)...)
	srv.Env = binaryEnv()
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	addrRE := regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`)
	lines := bufio.NewScanner(stderr)
	addr := ""
	for addr == "" && lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("server did not report its address")
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return "http://" + addr
}

func post(t *testing.T, url, body string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	_ = resp.Body.Close()
}

// scrape parses url's exposition with Prometheus' text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := get(t, url)
	if code != http.StatusOK {
		t.Fatalf("GET %s = %d", url, code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return families
}

// checkFamily checks that role serves the family name with a series, all
// of whose labels (le of a histogram's buckets aside) are labels.
func checkFamily(t *testing.T, role string, families map[string]*dto.MetricFamily, name string, labels []string) {
	t.Helper()
	f := families[name]
	if f == nil || len(f.GetMetric()) == 0 {
		t.Errorf("%s serves no %s", role, name)
		return
	}
	for _, m := range f.GetMetric() {
		var got []string
		for _, l := range m.GetLabel() {
			got = append(got, l.GetName())
		}
		slices.Sort(got)
		if !slices.Equal(got, labels) {
			t.Errorf("%s: %s has labels %v, want %v", role, name, got, labels)
			return
		}
	}
}

// hasSeries reports whether f has a counter series above 0 with the
// labels want (and maybe others).
func hasSeries(f *dto.MetricFamily, want map[string]string) bool {
	for _, m := range f.GetMetric() {
		if m.GetCounter().GetValue() <= 0 {
			continue
		}
		n := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				n++
			}
		}
		if n == len(want) {
			return true
		}
	}
	return false
}
