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
// Fairness exempts them). --soak runs the soak of docs/reliability.md and
// --scale the split roles over many clusters of docs/scaling.md.
//
//	go run ./hack/loadtest --graphcd bin/graphcd --apps 1000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"

	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller"
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
	// scale runs the split roles over many clusters (see runScale).
	scale bool
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
	flag.StringVar(&so.out, "out", "", "with --soak: directory for soak.csv and the pictures soak-rss.svg and soak-goroutines.svg; with --scale-plot: directory for the pictures")
	sc := scaleOptions{namespace: "graphcd"}
	flag.BoolVar(&o.scale, "scale", false, "run graphcd's split roles as processes with --apps auto-synced apps spread over --clusters destination clusters (each its own etcd and kube-apiserver); report time, CPU and RSS per role, API requests, steady CPU, list latency and push latency")
	flag.IntVar(&sc.clusters, "clusters", 10, "with --scale: destination clusters")
	flag.IntVar(&sc.shards, "shards", 2, "with --scale: controller shards")
	flag.StringVar((*string)(&sc.shardMethod), "sharding-method", string(controller.ShardRoundRobin), "with --scale: the controllers' --sharding-method (hash or round-robin)")
	flag.IntVar(&sc.apiReplicas, "api-replicas", 2, "with --scale: API replicas (graphcd server --controller=false)")
	flag.IntVar(&sc.repoServers, "repo-servers", 2, "with --scale: repository servers")
	flag.BoolVar(&sc.killShard, "kill-shard", false, "with --scale: run a standby per shard and kill the leader of the busiest shard once a third of the apps are reconciled")
	flag.BoolVar(&sc.addShard, "add-shard", false, "with --scale: run the controllers with --dynamic-shards and, after the pushes, start one more shard; time the rebalance and one more push")
	flag.IntVar(&sc.pushes, "pushes", 3, "with --scale: pushes changing every app, each timed from the webhook to every app's OutOfSync event")
	flag.IntVar(&sc.listRequests, "list-requests", 200, "with --scale: requests of the 500-app list page")
	argocd := flag.String("argocd", "", "with --scale: Argo CD's binary (bench/argocd/build.sh prints it); run the same workload through graphcd's split roles, one of each, and through Argo CD's application controller and repository server, each on fresh clusters, and report both side by side")
	flag.StringVar(&sc.csv, "scale-csv", "", "with --scale: append the run's figures as a row to this CSV file")
	flag.StringVar(&sc.controllerMemory, "controller-memory-limit", "", "with --scale: the controllers' GOMEMLIMIT (e.g. 560MiB), as a manifest derives it from a container's memory limit; empty sets none")
	flag.StringVar(&sc.profiles, "profiles", "", "with --scale: save the roles' Go runtime profiles into this directory (CPU over the first minute of syncs, the steady state and the first push; the heap once all apps synced)")
	flag.BoolVar(&sc.serviceAccounts, "service-accounts", true, "with --scale: run the controllers and API replicas as deploy/ha's ServiceAccounts (API Priority and Fairness applies as in a real installation); false runs them as the cluster admin, whose requests it exempts")
	plot := flag.String("scale-plot", "", "draw the runs of this --scale-csv file as SVG pictures in --out, and do nothing else")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *plot != "" {
		if so.out == "" {
			return fmt.Errorf("--scale-plot needs --out")
		}
		return plotScale(*plot, so.out)
	}
	if o.scale {
		sc.graphcd, sc.apps, sc.steady, sc.log = o.graphcd, o.apps, o.steady, log
		if *argocd != "" {
			return sideBySideMain(sc, *argocd, o.timeout)
		}
		return scaleMain(sc, o.timeout)
	}
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
	listen, err := localcluster.FreeAddr()
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
	first, all, err := waitReconciled(ctx, cluster, appsGVR, "graphcd", start, o.apps, nil)
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
