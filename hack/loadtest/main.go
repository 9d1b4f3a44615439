// Command loadtest measures the Application controller on the reference
// workload of the Argo CD benchmarks: N Applications, each one ConfigMap
// (~2.3 KB, 20 keys) in its own namespace, from one Git repository served
// over smart HTTP on loopback, against a local etcd + kube-apiserver.
//
// It starts `graphcd server` as a separate process and reports the time
// from its start to the first and to all apps reconciled (Synced and
// Healthy), its CPU seconds and peak RSS, and its steady-state CPU at the
// default resync. --unrelated adds ConfigMaps no app owns, to show that an
// app's cost does not grow with unrelated objects. --sync times automated
// syncs instead, and --impersonate runs them as service accounts (sync
// impersonation); --notify subscribes every app to on-sync-succeeded and
// times the notifications. --service-account runs graphcd itself as a
// ServiceAccount bound to cluster-admin, as an installed graphcd runs,
// rather than as the cluster's system:masters admin, whose requests the
// API server authorizes at once and never queues (API Priority and
// Fairness exempts them).
//
//	go run ./hack/loadtest --graphcd bin/graphcd --apps 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

func main() {
	runtime.LockOSThread() // children die with us (Pdeathsig)
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "loadtest: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	graphcd   string
	apps      int
	unrelated int
	// sync creates the Applications with automated sync and
	// CreateNamespace once graphcd runs, and nothing live: graphcd
	// creates every namespace and object.
	sync bool
	// resources per app: 1 (the ConfigMap) or 5 (Deployment, Service,
	// ConfigMap, ServiceAccount and Secret in sync waves; needs a full
	// cluster, whose KWOK nodes run the pods).
	resources int
	steady    time.Duration
	timeout   time.Duration
	// impersonate turns sync impersonation on: "shared" syncs every app
	// as one service account, "per-app" as a service account of each
	// app's namespace (500 apps, 500 accounts); "" leaves it off.
	impersonate string
	// serviceAccount runs graphcd with a ServiceAccount's token.
	serviceAccount bool
	// multiSource makes each app a chart from a chart repository with
	// its values from the Git repository (two sources), and times a
	// values push after the syncs.
	multiSource bool
	appset      bool
	// notify subscribes every app to on-sync-succeeded and times the
	// notifications (see notifyBench).
	notify bool
	// chartsURL is the chart repository of multiSource.
	chartsURL string
	// traceRatio, 0 to 1, sends traces at that sampling ratio to a
	// receiver in the harness; negative leaves tracing off.
	traceRatio float64
	// soak runs the soak (see runSoak) instead of a measurement.
	soak bool
}

func run() error {
	var o options
	flag.StringVar(&o.graphcd, "graphcd", "bin/graphcd", "graphcd binary")
	flag.IntVar(&o.apps, "apps", 1000, "number of Applications")
	flag.IntVar(&o.unrelated, "unrelated", 0, "ConfigMaps no app owns, added to the cluster")
	flag.BoolVar(&o.sync, "sync", false, "let graphcd create everything by automated sync, timed from creating the Applications")
	flag.IntVar(&o.resources, "resources", 1, "resources per app: 1 (ConfigMap) or 5 (Deployment, Service, ConfigMap, ServiceAccount, Secret in waves)")
	flag.DurationVar(&o.steady, "steady", 2*time.Minute, "how long to measure steady-state CPU after all apps reconciled")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after")
	flag.StringVar(&o.impersonate, "impersonate", "", "sync impersonation: shared (one service account for every app) or per-app (one per app namespace); needs --sync")
	flag.BoolVar(&o.serviceAccount, "service-account", false, "run graphcd as a ServiceAccount bound to cluster-admin, as installed, instead of as system:masters")
	flag.BoolVar(&o.appset, "appset", false, "generate the apps with one ApplicationSet (git directories) instead of creating them; time the generation and a push adding an app; needs --sync")
	flag.BoolVar(&o.multiSource, "multi-source", false, "each app is a chart from a chart repository with values from the Git repository ($values); after the syncs, push new values and time the re-syncs; needs --sync")
	flag.BoolVar(&o.notify, "notify", false, "subscribe every app to on-sync-succeeded (webhooks to a receiver on loopback) and report the latency from each sync's success to its notification, the duplicates and the CPU until all were delivered; needs --sync")
	flag.Float64Var(&o.traceRatio, "trace-ratio", -1, "send OpenTelemetry traces at this sampling ratio (0 to 1) to an OTLP receiver in the harness (default: tracing off)")
	so := soakOptions{pushEvery: 10 * time.Second, loginEvery: time.Second}
	flag.BoolVar(&o.soak, "soak", false, "run the soak: --apps auto-synced apps, a push every 10 s, --subscribers GraphQL subscribers of their events and a login every second for --duration; sample the server's RSS and goroutines, check the events, fail when a target is missed")
	flag.IntVar(&so.subscribers, "subscribers", 500, "with --soak: GraphQL websocket subscribers")
	flag.DurationVar(&so.duration, "duration", 30*time.Minute, "with --soak: how long the load runs")
	flag.DurationVar(&so.warmup, "warmup", 5*time.Minute, "with --soak: the start of the load left out of the slopes")
	flag.DurationVar(&so.sampleEvery, "sample-every", 5*time.Second, "with --soak: how often the server's RSS and goroutines are sampled")
	flag.StringVar(&so.out, "out", "", "with --soak: directory for soak.csv and the pictures soak-rss.svg and soak-goroutines.svg")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if o.soak {
		so.graphcd, so.apps, so.log, so.stderr = o.graphcd, o.apps, log, os.Stderr
		return soakMain(so, o.timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()

	if o.resources != 1 && o.resources != 5 {
		return fmt.Errorf("--resources must be 1 or 5, not %d", o.resources)
	}
	switch {
	case o.impersonate != "" && o.impersonate != "shared" && o.impersonate != "per-app":
		return fmt.Errorf("--impersonate must be shared or per-app, not %q", o.impersonate)
	case o.impersonate != "" && !o.sync:
		return fmt.Errorf("--impersonate needs --sync")
	case o.multiSource && (!o.sync || o.resources != 1):
		return fmt.Errorf("--multi-source needs --sync and --resources 1")
	case o.appset && (!o.sync || o.resources != 1 || o.multiSource):
		return fmt.Errorf("--appset needs --sync and --resources 1, without --multi-source")
	case o.notify && (!o.sync || o.appset || o.multiSource):
		return fmt.Errorf("--notify needs --sync, without --appset or --multi-source")
	}
	mode := localcluster.Minimal
	if o.resources > 1 {
		mode = localcluster.Full
	}
	cluster, err := localcluster.Start(ctx, localcluster.Options{Mode: mode, Logger: log})
	if err != nil {
		return err
	}
	defer func() { _ = cluster.Stop() }()
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(cluster.Config)); err != nil {
		return err
	}
	repoURL, stopGit, err := serveRepo(cluster.Dir, o)
	if err != nil {
		return err
	}
	defer stopGit()
	if o.multiSource {
		var stopCharts func()
		if o.chartsURL, stopCharts, err = serveCharts(cluster.Dir); err != nil {
			return err
		}
		defer stopCharts()
	}
	log.Info("creating workload", "apps", o.apps, "unrelated", o.unrelated)
	if err := createWorkload(ctx, cluster, repoURL, o); err != nil {
		return err
	}

	var notify *notifyBench
	if o.notify {
		if notify, err = startNotifyBench(); err != nil {
			return err
		}
		defer notify.stop()
		if err := notify.configure(ctx, cluster); err != nil {
			return err
		}
	}
	kubeconfig := cluster.Kubeconfig
	if o.serviceAccount {
		if kubeconfig, err = serviceAccountKubeconfig(ctx, cluster); err != nil {
			return err
		}
	}
	listen, err := freeAddr()
	if err != nil {
		return err
	}
	traces, err := startTraceSink(ctx, o.traceRatio)
	if err != nil {
		return err
	}
	defer traces.stop()
	args := append([]string{"server", "--insecure", "--listen", listen, "--kubeconfig", kubeconfig, "--namespace", "graphcd", "--log-level", "warn"}, traces.serverArgs(o.traceRatio)...)
	srv := exec.Command(o.graphcd, args...) //nolint:noctx,gosec // stopped with SIGTERM; the harness's own binary
	defer func() { log.Info("spans received", "spans", traces.spans()) }()
	srv.Stderr = os.Stderr
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	start := time.Now()
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { _ = srv.Process.Signal(syscall.SIGTERM); _ = srv.Wait() }()
	pid := srv.Process.Pid

	var cpuStart, clusterStart float64
	var generated time.Duration
	var generatedErr error
	generatedDone := make(chan struct{})
	if o.sync {
		// Timed from creating the Applications, on a running graphcd.
		if err := waitReady(ctx, "http://"+listen+"/readyz"); err != nil {
			return err
		}
		time.Sleep(2 * time.Second) // the controller's caches fill after readiness
		if cpuStart, err = cpuSeconds(pid); err != nil {
			return err
		}
		if clusterStart, err = clusterCPU(cluster); err != nil {
			return err
		}
		if notify != nil {
			go func() { _ = notify.watchSucceeded(ctx, cluster) }()
		}
		start = time.Now()
		log.Info("creating applications", "apps", o.apps, "resources", o.resources, "appset", o.appset)
		if o.appset {
			if err := createAppSet(ctx, cluster, repoURL); err != nil {
				return err
			}
			go func() { generated, generatedErr = waitGenerated(ctx, cluster, start, o.apps); close(generatedDone) }()
		} else if err := createApps(ctx, cluster, repoURL, o); err != nil {
			return err
		}
	}
	first, all, err := waitReconciled(ctx, cluster, start, o.apps)
	if err != nil {
		return err
	}
	cpuReconciled, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	cpuAll := cpuReconciled - cpuStart
	clusterAll, err := clusterCPU(cluster)
	if err != nil {
		return err
	}
	clusterAll -= clusterStart
	if notify != nil {
		return notify.report(ctx, o.apps, pid, start, all, cpuStart, cpuAll)
	}
	time.Sleep(o.steady)
	cpuEnd, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	peak, err := peakRSS(pid)
	if err != nil {
		return err
	}
	steady := (cpuEnd - cpuReconciled) / o.steady.Seconds() * 1000
	if o.impersonate != "" {
		// After the measurement: proof that the syncs acted as the
		// accounts, not as graphcd.
		if err := canary(ctx, cluster, repoURL); err != nil {
			return err
		}
		log.Info("impersonation verified: a sync outside the accounts' rights was refused by the API server")
	}
	if o.multiSource {
		return valuesPush(ctx, cluster, listen, repoURL, o, first, all, cpuAll, clusterAll, peak, steady)
	}
	if o.appset {
		<-generatedDone
		if generatedErr != nil {
			return generatedErr
		}
		pushed, writes, err := appsetPush(ctx, cluster, listen, repoURL, o)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %.1f s | %.1f s | %.1f s | %.2f s | %d | %.1f CPU-s | %d MiB |\n",
			o.apps, generated.Seconds(), first.Seconds(), all.Seconds(), pushed.Seconds(), writes, cpuAll, peak>>20)
		return nil
	}
	if o.sync {
		mode := o.impersonate
		if mode == "" {
			mode = "off"
		}
		fmt.Printf("| %d | %d | %s | %.1f s | %.1f s | %.1f CPU-s | %.1f CPU-s | %d MiB | %.1f mCPU |\n",
			o.apps, o.resources, mode, first.Seconds(), all.Seconds(), cpuAll, clusterAll, peak>>20, steady)
		return nil
	}
	fmt.Printf("| %d | %d | %.1f s | %.1f s | %.1f CPU-s | %d MiB | %.1f mCPU |\n",
		o.apps, o.unrelated, first.Seconds(), all.Seconds(), cpuAll, peak>>20, steady)
	return nil
}

// freeAddr returns a loopback address with a port free at the moment.
func freeAddr() (string, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}

// waitReady polls url until it answers 200.
func waitReady(ctx context.Context, url string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("graphcd never ready: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReconciled watches the Applications (one list, then a stream of
// changes: the harness itself stays light and sees each status the moment
// it is written) and returns when the first and when all apps were Synced
// and Healthy, counted from start.
func waitReconciled(ctx context.Context, cluster *localcluster.Cluster, start time.Time, apps int) (first, all time.Duration, err error) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config)
	appsGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "applications"}
	done := map[string]bool{}
	n := 0
	observe := func(a *unstructured.Unstructured) {
		sync, _, _ := unstructuredString(a.Object, "status", "sync", "status")
		h, _, _ := unstructuredString(a.Object, "status", "health", "status")
		ok := sync == "Synced" && h == "Healthy"
		if ok != done[a.GetName()] {
			if ok {
				n++
			} else {
				n--
			}
		}
		done[a.GetName()] = ok
	}
	list, err := dyn.Resource(appsGVR).Namespace("graphcd").List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for i := range list.Items {
		observe(&list.Items[i])
	}
	rv := list.GetResourceVersion()
	for {
		if n > 0 && first == 0 {
			first = time.Since(start)
		}
		if n == apps {
			return first, time.Since(start), nil
		}
		w, err := dyn.Resource(appsGVR).Namespace("graphcd").Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
		if err != nil {
			return 0, 0, fmt.Errorf("watch applications: %w", err)
		}
		for ev := range w.ResultChan() {
			a, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue // a watch error: start a new watch from rv
			}
			rv = a.GetResourceVersion()
			observe(a)
			if (n > 0 && first == 0) || n == apps {
				break
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("%d of %d apps reconciled: %w", n, apps, ctx.Err())
		}
	}
}

func unstructuredString(obj map[string]any, path ...string) (string, bool, error) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}

// configMapYAML is the reference object: 20 keys, ~2.3 KB; extraMeta is
// more metadata YAML (indented), if any.
func configMapYAML(i int, extraMeta string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: app-%04d\n%sdata:\n", i, extraMeta)
	for k := range 20 {
		fmt.Fprintf(&b, "  key-%02d: %q\n", k, strings.Repeat(strconv.Itoa(k%10), 100))
	}
	return b.String()
}

// fiveResources is the larger workload's app: a ServiceAccount, Secret and
// ConfigMap in wave -1, a Deployment (one replica) in wave 0 and its
// Service in wave 1.
func fiveResources(i int) map[string]string {
	ns := fmt.Sprintf("app-%04d", i)
	wave := func(w int) string {
		return fmt.Sprintf("  annotations: {argocd.argoproj.io/sync-wave: %q}\n", strconv.Itoa(w))
	}
	meta := func(kind, apiVersion, name string, w int) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n", apiVersion, kind, name, ns) + wave(w)
	}
	return map[string]string{
		"cm.yaml":     configMapYAML(i, wave(-1)),
		"sa.yaml":     meta("ServiceAccount", "v1", "web", -1),
		"secret.yaml": meta("Secret", "v1", "web", -1) + "stringData: {token: not-a-real-token}\n",
		"deploy.yaml": meta("Deployment", "apps/v1", "web", 0) + `spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers: [{name: web, image: "registry.example/web:1.0", ports: [{containerPort: 8080}]}]
`,
		"svc.yaml": meta("Service", "v1", "web", 1) + "spec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n",
	}
}

// serveRepo commits one directory per app and serves the repository over
// smart HTTP (git http-backend) on loopback.
func serveRepo(base string, o options) (string, func(), error) {
	work := filepath.Join(base, "repo-work")
	for i := range o.apps {
		dir := filepath.Join(work, "apps", fmt.Sprintf("app-%04d", i))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", nil, err
		}
		files := map[string]string{"cm.yaml": configMapYAML(i, "")}
		if o.resources == 5 {
			files = fiveResources(i)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				return "", nil, err
			}
		}
	}
	if o.multiSource {
		if err := writeValues(work, o.apps, ""); err != nil {
			return "", nil, err
		}
	}
	if o.impersonate != "" {
		dir := filepath.Join(work, "canary")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", nil, err
		}
		quota := "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: canary\nspec:\n  hard: {pods: \"1\"}\n"
		if err := os.WriteFile(filepath.Join(dir, "quota.yaml"), []byte(quota), 0o600); err != nil {
			return "", nil, err
		}
	}
	env := append(os.Environ(), "HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "apps"}, {"clone", "-q", "--bare", ".", filepath.Join(base, "git", "apps.git")}} {
		cmd := exec.Command("git", args...) //nolint:noctx // short-lived
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return "", nil, err
	}
	handler := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Join(base, "git"), "GIT_HTTP_EXPORT_ALL=1", "HOME=" + base, "GIT_CONFIG_NOSYSTEM=1",
	}}
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	return "http://" + l.Addr().String() + "/apps.git", func() { _ = hs.Close() }, nil
}

// createWorkload creates the namespaces, the live ConfigMaps (as a sync
// would have left them), unrelated ConfigMaps, and the Applications.
func createWorkload(ctx context.Context, c *localcluster.Cluster, repoURL string, o options) error {
	if o.sync {
		o.apps = 0 // created later, by createApps
	}
	cs := c.Client
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "graphcd"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	// Every installation has its default project (Argo CD's too).
	projGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "appprojects"}
	proj := map[string]any{
		"apiVersion": "graphcd.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": "graphcd"},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}
	if o.impersonate != "" {
		if err := impersonation(ctx, c, proj, o.impersonate); err != nil {
			return err
		}
	}
	if _, err := dyn.Resource(projGVR).Namespace("graphcd").Create(ctx, toUnstructured(proj), metav1.CreateOptions{}); err != nil {
		return err
	}
	appsGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "applications"}
	return forEach(max(o.apps, o.unrelated), func(i int) error {
		return createOne(ctx, c, dyn, appsGVR, repoURL, i, o)
	})
}

// impersonation turns sync impersonation on in graphcd-cm and names the
// service accounts in proj: one account of the graphcd namespace
// (shared), or "deployer" of each app's namespace (per-app). A
// ClusterRole gives them what the workload creates, namespaces included
// (CreateNamespace); the per-app accounts get it through their group, as
// they live in namespaces the syncs create.
func impersonation(ctx context.Context, c *localcluster.Cluster, proj map[string]any, mode string) error {
	cs := c.Client
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm", Namespace: "graphcd"},
		Data: map[string]string{"application.sync.impersonation.enabled": "true"}}
	if _, err := cs.CoreV1().ConfigMaps("graphcd").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps", "secrets", "serviceaccounts", "services"}, Verbs: []string{"*"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
	}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	account, subject := "graphcd:loadtest-deployer", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "loadtest-deployer", Namespace: "graphcd"}
	if mode == "per-app" {
		account, subject = "deployer", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts"}
	} else if _, err := cs.CoreV1().ServiceAccounts("graphcd").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "loadtest-deployer"},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	spec, _ := proj["spec"].(map[string]any)
	spec["destinationServiceAccounts"] = []any{map[string]any{"server": "*", "namespace": "*", "defaultServiceAccount": account}}
	return nil
}

// canary syncs one more app whose manifests hold a ResourceQuota, which
// the impersonated accounts may not create (graphcd itself may), and
// checks that the sync fails with the API server's refusal of a service
// account.
func canary(ctx context.Context, c *localcluster.Cluster, repoURL string) error {
	dyn := dynamic.NewForConfigOrDie(c.Config)
	appsGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "applications"}
	app := application(repoURL, 0, true)
	app["metadata"] = map[string]any{"name": "canary", "namespace": "graphcd"}
	spec, _ := app["spec"].(map[string]any)
	spec["source"] = map[string]any{"repoURL": repoURL, "path": "canary", "targetRevision": "main"}
	spec["destination"] = map[string]any{"server": "https://kubernetes.default.svc", "namespace": "canary"}
	if _, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(app), metav1.CreateOptions{}); err != nil {
		return err
	}
	for {
		a, err := dyn.Resource(appsGVR).Namespace("graphcd").Get(ctx, "canary", metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase, _, _ := unstructuredString(a.Object, "status", "operationState", "phase")
		if phase == "Failed" || phase == "Succeeded" || phase == "Error" {
			results, _, _ := unstructured.NestedSlice(a.Object, "status", "operationState", "syncResult", "resources")
			for _, r := range results {
				if msg, _, _ := unstructuredString(r.(map[string]any), "message"); strings.Contains(msg, `User "system:serviceaccount:`) {
					return nil
				}
			}
			return fmt.Errorf("the canary sync ended %s without a service account's refusal: impersonation did not apply", phase)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// forEach calls fn for 0..n-1 from 16 goroutines and returns the first
// error; after an error the remaining calls are skipped.
func forEach(n int, fn func(i int) error) error {
	work := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		bad   atomic.Bool
	)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if bad.Load() {
					continue
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					bad.Store(true)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}

// createApps creates the Applications of --sync: automated sync with
// prune and self-heal, CreateNamespace, nothing live beforehand.
func createApps(ctx context.Context, c *localcluster.Cluster, repoURL string, o options) error {
	dyn := dynamic.NewForConfigOrDie(c.Config)
	appsGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "applications"}
	return forEach(o.apps, func(i int) error {
		app := application(repoURL, i, true)
		if o.notify {
			subscribe(app, i)
		}
		if o.multiSource {
			spec := app["spec"].(map[string]any)
			delete(spec, "source")
			spec["sources"] = multiSourceSpec(o.chartsURL, repoURL, fmt.Sprintf("app-%04d", i))
		}
		_, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(app), metav1.CreateOptions{})
		return err
	})
}

// application is app i of the workload, automated when auto.
func application(repoURL string, i int, auto bool) map[string]any {
	ns := fmt.Sprintf("app-%04d", i)
	spec := map[string]any{
		"project":     "default",
		"source":      map[string]any{"repoURL": repoURL, "path": "apps/" + ns, "targetRevision": "main"},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns},
	}
	if auto {
		spec["syncPolicy"] = map[string]any{
			"automated":   map[string]any{"prune": true, "selfHeal": true},
			"syncOptions": []any{"CreateNamespace=true"},
		}
	}
	return map[string]any{
		"apiVersion": "graphcd.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": ns, "namespace": "graphcd"},
		"spec":     spec,
	}
}

func createOne(ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, appsGVR schema.GroupVersionResource, repoURL string, i int, o options) error {
	cs := c.Client
	if i < o.apps {
		ns := fmt.Sprintf("app-%04d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns}, Data: map[string]string{}}
		cache.Tracking{}.Mark(cm, schema.GroupKind{Kind: "ConfigMap"}, ns, ns)
		for k := range 20 {
			cm.Data[fmt.Sprintf("key-%02d", k)] = strings.Repeat(strconv.Itoa(k%10), 100)
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(application(repoURL, i, false)), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if i < o.unrelated {
		ns := fmt.Sprintf("noise-%02d", i%50)
		if i < 50 {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		} else {
			time.Sleep(time.Millisecond) // let the namespace exist
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-%05d", i), Namespace: ns}, Data: map[string]string{"k": strings.Repeat("x", 2000)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// cpuSeconds reads user+system CPU time of pid from /proc.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(fields[11], 64)
	st, _ := strconv.ParseFloat(fields[12], 64)
	return (ut + st) / 100, nil // clock ticks; 100 Hz on Linux
}

// clusterCPU sums the CPU seconds of the cluster's processes (etcd and
// kube-apiserver, and the rest in a full cluster).
func clusterCPU(c *localcluster.Cluster) (float64, error) {
	var sum float64
	for _, pid := range c.PIDs() {
		s, err := cpuSeconds(pid)
		if err != nil {
			return 0, err
		}
		sum += s
	}
	return sum, nil
}

// peakRSS reads VmHWM of pid, in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM for pid %d", pid)
}

func toUnstructured(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// serviceAccountKubeconfig makes ServiceAccount graphcd/graphcd-server
// with cluster-admin (which holds impersonate) and writes a kubeconfig
// with a token of it, for graphcd to run as an install runs it.
func serviceAccountKubeconfig(ctx context.Context, c *localcluster.Cluster) (string, error) {
	const ns, name = "graphcd", "graphcd-server"
	cs := c.Client
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadtest-graphcd-server"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	hours := int64(24 * 3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hours}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of %s/%s: %w", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthority: c.Config.CAFile, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	cfg.CurrentContext = "local"
	path := filepath.Join(c.Dir, "graphcd-server.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}
