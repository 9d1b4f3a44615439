package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
	"github.com/graphcd/graphcd/internal/testenv/roles"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// The Argo CD side of the side-by-side runs (--argocd): Argo CD's
// application controller and repository server, as bench/argocd/build.sh
// builds them, with Redis, on a management cluster of their own, against
// destination clusters started the same way as graphcd's. No Argo CD API
// server runs: nothing in the measurement goes through it.

const argoNamespace = "argocd"

var (
	argoAppsGVR     = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	argoProjectsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "appprojects"}
	crdsGVR         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// argoInstallation is Argo CD's application controller and repository
// server, and their Redis, running against a management cluster.
type argoInstallation struct {
	redis                  *localredis.Server
	repoServer, controller *roles.Role
}

func (a *argoInstallation) procs() []proc {
	var ps []proc
	for _, r := range []*roles.Role{a.repoServer, a.controller} {
		if r != nil && r.Running() {
			ps = append(ps, proc{r.Name, r.PID()})
		}
	}
	if a.redis != nil {
		ps = append(ps, proc{"redis", a.redis.PID()})
	}
	return ps
}

func (a *argoInstallation) stop() {
	for _, r := range []*roles.Role{a.controller, a.repoServer} {
		if r != nil {
			r.Stop()
		}
	}
	if a.redis != nil {
		_ = a.redis.Stop()
	}
}

// installArgoCD installs Argo CD's CRDs (from bin's <bin>.crds.yaml),
// settings and default project on mgmt, starts Redis, the repository
// server and the application controller with their defaults, and waits
// until both serve. On error what started is stopped again.
func installArgoCD(ctx context.Context, mgmt *localcluster.Cluster, bin, dir string) (_ *argoInstallation, err error) {
	a := &argoInstallation{}
	defer func() {
		if err != nil {
			a.stop()
		}
	}()
	dyn := dynamic.NewForConfigOrDie(mgmt.Config)
	if err := createCRDs(ctx, dyn, bin+".crds.yaml"); err != nil {
		return nil, err
	}
	core := mgmt.Client.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: argoNamespace}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// The settings Argo CD's manifests install, empty: every default.
	part := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: argoNamespace, Name: name, Labels: map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "argocd"}}
	}
	if _, err := core.ConfigMaps(argoNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: part("argocd-cm")}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret := &corev1.Secret{ObjectMeta: part("argocd-secret"), StringData: map[string]string{"server.secretkey": hex.EncodeToString(key)}}
	if _, err := core.Secrets(argoNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	// The default project as Argo CD's API server creates it: anything
	// from anywhere to anywhere.
	project := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": argoNamespace},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}
	if _, err := dyn.Resource(argoProjectsGVR).Namespace(argoNamespace).Create(ctx, toUnstructured(project), metav1.CreateOptions{}); err != nil {
		return nil, err
	}

	if a.redis, err = localredis.Start(ctx); err != nil {
		return nil, fmt.Errorf("start redis: %w", err)
	}
	repoPort, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	repoMetrics, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	controllerMetrics, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, "argocd-tmp")
	if err := os.MkdirAll(tmp, 0o750); err != nil {
		return nil, err
	}
	redisEnv := "REDIS_PASSWORD=" + a.redis.Password
	// The repository server clones into TMPDIR; its askpass socket is at a
	// fixed path in /tmp, so one Argo CD runs at a time on a machine.
	a.repoServer = &roles.Role{
		Name: "argocd-repo-server", Bin: bin, LogPath: filepath.Join(dir, "argocd-repo-server.log"),
		Env: []string{"ARGOCD_BINARY_NAME=argocd-repo-server", redisEnv, "ARGOCD_GPG_ENABLED=false", "TMPDIR=" + tmp},
		Args: []string{"--address", "127.0.0.1", "--port", strconv.Itoa(repoPort), "--disable-tls",
			"--metrics-address", "127.0.0.1", "--metrics-port", strconv.Itoa(repoMetrics),
			"--redis", a.redis.Addr, "--logformat", "text"},
		Health: fmt.Sprintf("http://127.0.0.1:%d/healthz", repoMetrics),
	}
	if err := a.repoServer.Start(ctx); err != nil {
		return nil, err
	}
	// The controller's metrics (and health) listen on every address: it
	// takes a port only (controller/appcontroller.go).
	a.controller = &roles.Role{
		Name: "argocd-application-controller", Bin: bin, LogPath: filepath.Join(dir, "argocd-application-controller.log"),
		Env: []string{"ARGOCD_BINARY_NAME=argocd-application-controller", redisEnv},
		Args: []string{"--kubeconfig", mgmt.Kubeconfig, "--namespace", argoNamespace,
			"--repo-server", "127.0.0.1:" + strconv.Itoa(repoPort), "--repo-server-plaintext",
			"--metrics-port", strconv.Itoa(controllerMetrics), "--redis", a.redis.Addr, "--logformat", "text"},
		Health: fmt.Sprintf("http://127.0.0.1:%d/healthz", controllerMetrics),
	}
	if err := a.controller.Start(ctx); err != nil {
		return nil, err
	}
	return a, nil
}

// createCRDs creates the CustomResourceDefinitions of the YAML file path
// and waits until Argo CD's Applications and AppProjects are served.
func createCRDs(ctx context.Context, dyn dynamic.Interface, path string) error {
	b, err := os.ReadFile(path) //nolint:gosec // the harness's own input, from bench/argocd/build.sh
	if err != nil {
		return fmt.Errorf("read Argo CD's CRDs (bench/argocd/build.sh writes them beside the binary): %w", err)
	}
	docs := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 1<<20)
	for {
		var crd map[string]any
		if err := docs.Decode(&crd); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if crd == nil {
			continue
		}
		if _, err := dyn.Resource(crdsGVR).Create(ctx, &unstructured.Unstructured{Object: crd}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	for _, gvr := range []schema.GroupVersionResource{argoAppsGVR, argoProjectsGVR} {
		for {
			_, err := dyn.Resource(gvr).Namespace(argoNamespace).List(ctx, metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
				return fmt.Errorf("%s not served: %w", gvr.Resource, err)
			}
		}
	}
	return nil
}

// runArgoCD is the Argo CD side of a side-by-side run: the workload of
// runScale (o.apps auto-synced apps over o.clusters fresh destination
// clusters), measured the same way from the apps' creation until all are
// Synced and Healthy, then over the steady period.
func runArgoCD(ctx context.Context, mgmt *localcluster.Cluster, o scaleOptions, bin string) (*scaleResult, error) {
	o.namespace = argoNamespace
	r := &scaleResult{o: o, clusterApps: map[string]int{}}
	dests, logs, stopDests, err := startRun(ctx, o)
	defer stopDests()
	if err != nil {
		return nil, err
	}
	o.log.Info("installing Argo CD", "binary", bin)
	a, err := installArgoCD(ctx, mgmt, bin, logs)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	for k, d := range dests {
		if err := registerCluster(ctx, mgmt, argoNamespace, wellknown.ArgoSecretTypeLabel, k, o.clusters, d); err != nil {
			return nil, err
		}
	}
	repoURL, stopGit, err := serveRepo(o.dir, options{apps: o.apps, resources: 1})
	if err != nil {
		return nil, err
	}
	defer stopGit()
	all := append([]*localcluster.Cluster{mgmt}, dests...)
	before, err := costsNow(ctx, all, a.procs())
	if err != nil {
		return nil, err
	}
	o.log.Info("creating applications", "apps", o.apps, "clusters", o.clusters)
	dyn := dynamic.NewForConfigOrDie(mgmt.Config)
	start := time.Now()
	created := make(chan error, 1)
	go func() { created <- createScaleApps(ctx, dyn, argoAppsGVR, o, repoURL) }()
	if r.first, r.all, err = waitReconciled(ctx, mgmt, argoAppsGVR, argoNamespace, start, o.apps, nil); err != nil {
		return nil, err
	}
	if err := <-created; err != nil {
		return nil, fmt.Errorf("create the applications: %w", err)
	}
	o.log.Info("all applications Synced and Healthy", "after", r.all.Round(time.Millisecond))
	after, err := costsNow(ctx, all, a.procs())
	if err != nil {
		return nil, err
	}
	if err := r.measured(before, after, a.procs(), nil); err != nil {
		return nil, err
	}
	if err := r.checkApps(ctx, dyn, argoAppsGVR, dests); err != nil {
		return nil, err
	}
	if err := r.measureSteady(a.procs, all); err != nil {
		return nil, err
	}
	for _, role := range []*roles.Role{a.repoServer, a.controller} {
		if p := role.Panics(); len(p) > 0 {
			r.failures = append(r.failures, fmt.Sprintf("%s panicked: %q", role.Name, p))
		}
	}
	return r, nil
}

// sideBySideMain is --argocd: the same workload through graphcd's split
// roles (one of each) and through Argo CD, one after the other, each on
// fresh clusters, and one table of both.
func sideBySideMain(o scaleOptions, argocd string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// One of each, as Argo CD runs here: one controller, one repository
	// server (and graphcd's one API replica, which Argo CD goes without).
	o.shards, o.apiReplicas, o.repoServers = 1, 1, 1
	o.pushes, o.listRequests, o.killShard, o.addShard = 0, 0, false, false
	// Argo CD's roles run as the admin here: so do graphcd's.
	o.serviceAccounts = false
	sides := []struct {
		name string
		run  func(context.Context, *localcluster.Cluster, scaleOptions) (*scaleResult, error)
	}{
		{"graphcd", runScale},
		{"Argo CD", func(ctx context.Context, mgmt *localcluster.Cluster, o scaleOptions) (*scaleResult, error) {
			return runArgoCD(ctx, mgmt, o, argocd)
		}},
	}
	var results []*scaleResult
	for _, side := range sides {
		o.log.Info("side by side: starting", "side", side.name)
		mgmt, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal, Logger: o.log})
		if err != nil {
			return err
		}
		so := o
		so.dir = mgmt.Dir
		r, err := side.run(ctx, mgmt, so)
		_ = mgmt.Stop()
		if err != nil {
			return fmt.Errorf("%s: %w", side.name, err)
		}
		results = append(results, r)
	}
	fmt.Println(sideBySideReport(results[0], results[1]))
	var failed []string
	for i, r := range results {
		for _, f := range r.failures {
			failed = append(failed, sides[i].name+": "+f)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d checks failed:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	return nil
}

// sideBySideReport is one Markdown table of both runs, then each run's
// processes and most frequent API requests.
func sideBySideReport(g, a *scaleResult) string {
	var b strings.Builder
	total := func(r *scaleResult) (cpu float64, rss int64) {
		for _, f := range r.roles {
			cpu += f.cpu
			rss += f.peakRSS
		}
		return cpu, rss
	}
	gc, gm := total(g)
	ac, am := total(a)
	ratio := func(x, y float64) string {
		if x == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f×", y/x)
	}
	clusters := "1 cluster"
	if g.o.clusters != 1 {
		clusters = fmt.Sprintf("%d clusters", g.o.clusters)
	}
	fmt.Fprintf(&b, "%d apps × 1 ConfigMap over %s\n\n", g.o.apps, clusters)
	fmt.Fprintf(&b, "| | graphcd | Argo CD | Argo CD / graphcd |\n|---|---:|---:|---:|\n")
	row := func(what, format string, x, y float64) {
		fmt.Fprintf(&b, "| %s | "+format+" | "+format+" | %s |\n", what, x, y, ratio(x, y))
	}
	row("first app Synced+Healthy", "%.1f s", g.first.Seconds(), a.first.Seconds())
	row("all Synced+Healthy", "%.1f s", g.all.Seconds(), a.all.Seconds())
	row("CPU until then, every process", "%.1f CPU-s", gc, ac)
	row("clusters' CPU until then (etcd, kube-apiserver)", "%.1f CPU-s", g.clustersCPU, a.clustersCPU)
	row("kube-apiserver requests per app", "%.1f", g.apiRequests, a.apiRequests)
	row("sum of the processes' peak RSS", "%.0f MiB", float64(gm>>20), float64(am>>20))
	row(fmt.Sprintf("steady CPU over %v, every process", g.o.steady), "%.0f mCPU", g.steadyGraphcd, a.steadyGraphcd)
	row(fmt.Sprintf("steady CPU over %v, clusters", g.o.steady), "%.0f mCPU", g.steadyClusters, a.steadyClusters)
	for _, side := range []struct {
		name string
		r    *scaleResult
	}{{"graphcd", g}, {"Argo CD", a}} {
		fmt.Fprintf(&b, "\n%s's processes:", side.name)
		for _, f := range side.r.roles {
			fmt.Fprintf(&b, " %s %.1f CPU-s, %d MiB;", f.name, f.cpu, f.peakRSS>>20)
		}
		var top []string
		for _, c := range side.r.topRequests {
			top = append(top, fmt.Sprintf("%s %.2f", c.what, c.perApp))
		}
		fmt.Fprintf(&b, " API requests per app, the most frequent: %s.\n", strings.Join(top, ", "))
	}
	return b.String()
}
