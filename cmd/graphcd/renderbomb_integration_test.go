//go:build integration

package main

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// `graphcd server` (API, controller and repository server in one process)
// with apps pointing at the one-line chart `repeat 100000000000 "x"`, a
// Helm string doubling, Jsonnet std.makeArray(1e9) and Jsonnet string
// doubling: each bomb app gets a ComparisonError naming the memory budget,
// while the process keeps serving /readyz and a good app of the same
// repository is rendered and compared.
func TestServerSurvivesRenderBombs(t *testing.T) {
	bin := buildBinary(t)
	install := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	}
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	chart := "apiVersion: v2\nname: bomb\nversion: 0.1.0\n"
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"repeat/Chart.yaml":          chart,
		"repeat/templates/cm.yaml":   `{{- $s := repeat 100000000000 "x" }}` + "\n",
		"doubling/Chart.yaml":        chart,
		"doubling/templates/cm.yaml": `{{- $s := "xxxxxxxxxxxxxxxx" }}{{- range until 40 }}{{- $s = print $s $s }}{{- end }}` + "\n",
		"makearray/main.jsonnet":     "std.makeArray(1e9, function(i) i)\n",
		"strdouble/main.jsonnet":     `local d(s, n) = if n == 0 then s else d(s + s, n - 1); {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x"}, data: {a: d("x", 40)}}` + "\n",
		"good/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\ndata:\n  a: b\n",
	})
	repoURL := serveGit(t, dir)

	port, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.CommandContext(context.WithoutCancel(t.Context()), bin, "server", "--insecure", "--kubeconfig", cluster.Kubeconfig,
		"--namespace", ns, "--listen", "127.0.0.1:"+strconv.Itoa(port), "--log-format", "text",
		"--render-memory-limit", strconv.Itoa(384<<20), "--render-parallelism", "2")
	cmd.Env = binaryEnv()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if err := <-exited; err != nil {
			t.Logf("graphcd server stopped: %v", err)
		}
	})
	ready := func() (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("graphcd server exited: %v\n%s", err, logs)
		default:
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false, fmt.Sprintf("%v\n%s", err, logs)
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	}
	poll(t, "graphcd server to be ready", ready)

	apps := kubeClient(t)
	bombs := []string{"repeat", "doubling", "makearray", "strdouble"}
	for _, path := range append(bombs, "good") {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: path, Namespace: ns},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: path, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Name: controller.InClusterName, Namespace: dest},
			},
		}
		if err := apps.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) *v1alpha1.Application {
		var app v1alpha1.Application
		if err := apps.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, &app); err != nil {
			t.Fatal(err)
		}
		return &app
	}
	for _, name := range bombs {
		poll(t, "app "+name+" to report the memory budget", func() (bool, string) {
			app := get(name)
			for _, c := range app.Status.Conditions {
				if c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, "render exceeded its memory budget of 384 MiB") {
					return true, ""
				}
			}
			return false, fmt.Sprintf("conditions %+v", app.Status.Conditions)
		})
	}
	poll(t, "the good app to be compared", func() (bool, string) {
		s := get("good").Status
		return s.Sync.Revision != "" && s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Resources) == 1, fmt.Sprintf("status %+v", s)
	})
	if ok, why := ready(); !ok {
		t.Errorf("after the bombs, /readyz: %s", why)
	}
}
