package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/roles"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// scaleOptions configure a scale run (--scale): graphcd's split roles as
// processes on a management cluster, apps spread over destination
// clusters that each run their own etcd and kube-apiserver.
type scaleOptions struct {
	graphcd string
	apps    int
	// clusters are the destination clusters, started besides the
	// management cluster, which holds graphcd and its Applications only.
	clusters int
	// shards (controller shards), apiReplicas and repoServers are how
	// many of each role run.
	shards, apiReplicas, repoServers int
	// shardMethod is the controllers' --sharding-method.
	shardMethod controller.ShardMethod
	// namespace is graphcd's, on the management cluster.
	namespace string
	// killShard kills, once a third of the apps are Synced and Healthy,
	// the leader of the shard that owns the most clusters; its standby
	// must finish.
	killShard bool
	// addShard runs every controller with --dynamic-shards and, after the
	// pushes, starts one more shard; the others must hand it its clusters
	// without a restart, and one more push must reach every app.
	addShard bool
	// pushes each change every app and are timed from the webhook to
	// each app's OutOfSync event, then until all synced again.
	pushes       int
	listRequests int
	steady       time.Duration
	// csv, when set, is a file the run's figures are appended to.
	csv string
	// controllerMemory, when set, is the controllers' GOMEMLIMIT, as a
	// manifest sets it from a container's memory limit.
	controllerMemory string
	// profiles, when set, is a directory for the roles' runtime
	// profiles: CPU over the first minute of syncs, the steady state and
	// the first push, and the heap once all apps synced.
	profiles string
	// serviceAccounts runs the controllers and API replicas as deploy/ha's
	// ServiceAccounts, so that API Priority and Fairness (and the
	// FlowSchema that keeps the Leases' requests apart) applies as in a
	// real installation; off they run as the admin, whom it exempts.
	serviceAccounts bool
	dir             string
	log             *slog.Logger
}

func (o scaleOptions) shardMethodOrDefault() controller.ShardMethod {
	return cmp.Or(o.shardMethod, controller.ShardByHash)
}

// owners is the shard of each destination cluster at shards shards, as
// the controllers split them: the registered clusters are the
// destinations and in-cluster (the management cluster).
func (o scaleOptions) owners(dests []*localcluster.Cluster, shards int) (map[*localcluster.Cluster]int, error) {
	servers := []string{controller.InClusterServer}
	for _, d := range dests {
		servers = append(servers, secretcodec.NormaliseServer(d.Config.Host))
	}
	assigned, err := controller.Assign(o.shardMethodOrDefault(), servers, shards)
	if err != nil {
		return nil, err
	}
	out := make(map[*localcluster.Cluster]int, len(dests))
	for i, d := range dests {
		out[d] = assigned[servers[i+1]]
	}
	return out, nil
}

// roleFigures is what one role cost from the apps' creation until all
// were reconciled.
type roleFigures struct {
	name    string
	cpu     float64 // seconds
	peakRSS int64   // bytes
	killed  bool
}

// pushFigures is one push's latencies from the webhook to each app's
// OutOfSync event, and to all apps synced at the push.
type pushFigures struct {
	latencies []time.Duration
	missing   int
	synced    time.Duration
}

// scaleResult is what a scale run measured, and the correctness checks
// it failed.
type scaleResult struct {
	o                scaleOptions
	first, all       time.Duration
	roles            []roleFigures
	clustersCPU      float64 // seconds, every cluster's etcd and kube-apiserver
	apiRequests      float64 // kube-apiserver requests of every cluster, per app
	topRequests      []requestCount
	steadyGraphcd    float64 // mCPU
	steadyClusters   float64 // mCPU
	killedRole       string
	killedAt         int // apps reconciled when the leader was killed
	takeover         time.Duration
	listLatencies    []time.Duration
	listTotal        int
	pushes           []pushFigures
	clusterApps      map[string]int
	failures         []string
	shardsOfClusters map[int]int
	rebalance        *rebalanceFigures
	leases           leaseWrites // the whole run's, from the management API server
}

// rebalanceFigures is what adding a shard did.
type rebalanceFigures struct {
	shard int
	// moved are the clusters the new shard won.
	moved []string
	// counted is the time from the new shard leading to every other
	// shard's leader counting it.
	counted time.Duration
	// reconciles are the new shard's reconciles after the push.
	reconciles float64
	push       pushFigures
}

// scaleApp is app i's name (and its namespace on its cluster) and its
// destination cluster's name.
func scaleApp(i, clusters int) (name, dest string) {
	return fmt.Sprintf("app-%04d", i), fmt.Sprintf("cluster-%02d", i%clusters)
}

// startRun prepares a run: it keeps the caller's GRAPHCD_* settings and
// kubeconfig from the processes it starts, makes the log directory
// logs in o.dir and starts the o.clusters destination clusters, four at
// a time; stop stops those that started.
func startRun(ctx context.Context, o scaleOptions) (dests []*localcluster.Cluster, logs string, stop func(), err error) {
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "GRAPHCD_") || name == "KUBECONFIG" {
			_ = os.Unsetenv(name)
		}
	}
	stop = func() {}
	logs = filepath.Join(o.dir, "logs")
	if err := os.MkdirAll(logs, 0o750); err != nil {
		return nil, "", stop, err
	}
	o.log.Info("starting destination clusters", "clusters", o.clusters)
	dests = make([]*localcluster.Cluster, o.clusters)
	stop = func() {
		for _, d := range dests {
			if d != nil {
				_ = d.Stop()
			}
		}
	}
	var g errgroup.Group
	g.SetLimit(4)
	for k := range dests {
		g.Go(func() (err error) {
			dests[k], err = localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal})
			return err
		})
	}
	return dests, logs, stop, g.Wait()
}

// registerCluster writes the cluster Secret of destination k (of
// clusters) into namespace ns of mgmt, in the format graphcd and Argo CD
// share, with label (graphcd's or Argo CD's) telling its type.
func registerCluster(ctx context.Context, mgmt *localcluster.Cluster, ns, label string, k, clusters int, d *localcluster.Cluster) error {
	_, name := scaleApp(k, clusters)
	cfg, err := d.SecretConfig()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{label: secretcodec.TypeCluster}},
		StringData: map[string]string{"name": name, "server": d.Config.Host, "config": cfg},
	}
	_, err = mgmt.Client.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{})
	return err
}

// createScaleApps creates o.apps auto-synced Applications of resource
// gvr (graphcd's or Argo CD's) in o.namespace, spread over the
// destination clusters by scaleApp.
func createScaleApps(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, o scaleOptions, repoURL string) error {
	return forEach(o.apps, func(i int) error {
		name, dest := scaleApp(i, o.clusters)
		app := application(repoURL, i, true)
		app["apiVersion"] = gvr.GroupVersion().String()
		app["metadata"].(map[string]any)["namespace"] = o.namespace
		app["spec"].(map[string]any)["destination"] = map[string]any{"name": dest, "namespace": name}
		_, err := dyn.Resource(gvr).Namespace(o.namespace).Create(ctx, toUnstructured(app), metav1.CreateOptions{})
		return err
	})
}

// runScale runs a scale run with mgmt as the management cluster. Its
// error is the harness's own; the correctness checks failed are in the
// result.
func runScale(ctx context.Context, mgmt *localcluster.Cluster, o scaleOptions) (_ *scaleResult, err error) {
	r := &scaleResult{o: o, clusterApps: map[string]int{}, shardsOfClusters: map[int]int{}}
	dests, logs, stopDests, err := startRun(ctx, o)
	defer stopDests()
	if err != nil {
		return nil, err
	}
	replicas := 1
	if o.killShard {
		replicas = 2
	}
	o.log.Info("installing graphcd", "shards", o.shards, "replicas", replicas, "api", o.apiReplicas, "repo-servers", o.repoServers)
	controllerArgs := []string{"--sharding-method", string(o.shardMethodOrDefault())}
	if o.addShard {
		controllerArgs = append(controllerArgs, "--dynamic-shards")
	}
	var controllerEnv []string
	if o.controllerMemory != "" {
		controllerEnv = []string{"GOMEMLIMIT=" + o.controllerMemory}
	}
	in, err := roles.Install(ctx, roles.Options{
		Bin: o.graphcd, Cluster: mgmt, Namespace: o.namespace, LogDir: logs,
		Shards: o.shards, Replicas: replicas, APIReplicas: o.apiReplicas, RepoServers: o.repoServers,
		ControllerArgs: controllerArgs, ControllerEnv: controllerEnv, Profiles: o.profiles != "",
		ServiceAccounts: o.serviceAccounts,
	})
	if err != nil {
		return nil, err
	}
	defer in.Stop()
	// A role that exits on its own (a shard that lost its Lease, say) ends
	// the run with its log, instead of a wait for apps nobody reconciles.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if exit, ok := <-in.Exits(ctx); ok {
			cancel(exit)
		}
	}()
	defer func() {
		if cause := context.Cause(ctx); err != nil && cause != nil && !errors.Is(cause, ctx.Err()) {
			err = fmt.Errorf("%w (after: %w)", cause, err)
		}
	}()
	for k, d := range dests {
		if err := registerCluster(ctx, mgmt, o.namespace, wellknown.SecretTypeLabel, k, o.clusters, d); err != nil {
			return nil, err
		}
	}
	owners, err := o.owners(dests, o.shards)
	if err != nil {
		return nil, err
	}
	for _, d := range dests {
		r.shardsOfClusters[owners[d]]++
	}
	repoURL, stopGit, err := serveRepo(o.dir, options{apps: o.apps, resources: 1})
	if err != nil {
		return nil, err
	}
	defer stopGit()
	all := append([]*localcluster.Cluster{mgmt}, dests...)
	before, err := costsNow(ctx, all, graphcdProcs(in))
	if err != nil {
		return nil, err
	}
	o.log.Info("creating applications", "apps", o.apps, "clusters", o.clusters)
	dyn := dynamic.NewForConfigOrDie(mgmt.Config)
	start := time.Now()
	var (
		killOnce sync.Once
		killDone = make(chan error, 1)
		killed   = map[string]roleFigures{}
	)
	progress := func(n int) {
		if !o.killShard || n < o.apps/3 {
			return
		}
		killOnce.Do(func() {
			r.killedAt = n
			go func() { killDone <- r.killLeader(ctx, in, before.cpu, killed) }()
		})
	}
	if !o.killShard {
		close(killDone)
	}
	prof := roleProfiles{dir: o.profiles, roles: in.All, log: o.log}
	syncProfiled := prof.cpu(ctx, "sync", time.Minute)
	created := make(chan error, 1)
	go func() { created <- createScaleApps(ctx, dyn, appsGVR, o, repoURL) }()
	r.first, r.all, err = waitReconciled(ctx, mgmt, appsGVR, o.namespace, start, o.apps, progress)
	if err != nil {
		return nil, err
	}
	if err := <-created; err != nil {
		return nil, fmt.Errorf("create the applications: %w", err)
	}
	if err := <-killDone; err != nil {
		return nil, err
	}
	o.log.Info("all applications Synced and Healthy", "after", r.all.Round(time.Millisecond))
	after, err := costsNow(ctx, all, graphcdProcs(in))
	if err != nil {
		return nil, err
	}
	if err := r.measured(before, after, graphcdProcs(in), killed); err != nil {
		return nil, err
	}
	if err := r.checkApps(ctx, dyn, appsGVR, dests); err != nil {
		return nil, err
	}
	syncProfiled()
	prof.heap(ctx, "synced")
	steadyProfiled := prof.cpu(ctx, "steady", o.steady)
	if err := r.measureSteady(func() []proc { return graphcdProcs(in) }, all); err != nil {
		return nil, err
	}
	steadyProfiled()
	password, err := in.AdminPassword(ctx)
	if err != nil {
		return nil, err
	}
	session, err := client.New(in.ServerURLs[0], "").Login(ctx, "admin", password)
	if err != nil {
		return nil, fmt.Errorf("log in: %w", err)
	}
	// The API replica that is last to have started: like all of them, it
	// runs no controller.
	if err := r.measureList(ctx, client.New(in.ServerURLs[len(in.ServerURLs)-1], session.Token)); err != nil {
		return nil, err
	}
	for p := range o.pushes {
		pushProfiled := func() {}
		if p == 0 {
			// Long enough for every app's comparison at the push.
			pushProfiled = prof.cpu(ctx, "push", 10*time.Second+time.Duration(o.apps)*6*time.Millisecond)
		}
		f, err := r.measurePush(ctx, mgmt, in, client.New(in.ServerURLs[0], session.Token), repoURL, p+1)
		pushProfiled()
		if err != nil {
			return nil, err
		}
		r.pushes = append(r.pushes, f)
	}
	if o.addShard {
		if err := r.addShard(ctx, mgmt, in, dests, client.New(in.ServerURLs[0], session.Token), repoURL); err != nil {
			return nil, err
		}
	}
	if err := r.measureLeases(ctx, mgmt); err != nil {
		return nil, err
	}
	for _, role := range in.All() {
		if p := role.Panics(); len(p) > 0 {
			r.failures = append(r.failures, fmt.Sprintf("%s panicked: %q", role.Name, p))
		}
	}
	return r, nil
}

// killLeader kills the leader of the shard that owns the most clusters
// and waits for its standby to take the Lease; the killed role's figures
// go to killed.
func (r *scaleResult) killLeader(ctx context.Context, in *roles.Installation, cpuBefore map[string]float64, killed map[string]roleFigures) error {
	shard := 0
	for s, n := range r.shardsOfClusters {
		if n > r.shardsOfClusters[shard] {
			shard = s
		}
	}
	leader, holder := in.Leader(ctx, shard)
	if leader == nil {
		return fmt.Errorf("shard %d has no running leader (Lease held by %q)", shard, holder)
	}
	f, err := figuresOf(proc{leader.Name, leader.PID()}, cpuBefore[leader.Name])
	if err != nil {
		return err
	}
	f.killed = true
	killed[leader.Name] = f
	r.killedRole = leader.Name
	r.o.log.Info("killing the shard's leader", "shard", shard, "role", leader.Name, "reconciled", r.killedAt)
	start := time.Now()
	leader.Kill()
	for {
		if next, _ := in.Leader(ctx, shard); next != nil {
			r.takeover = time.Since(start)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no standby took the Lease of shard %d: %w", shard, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// addShard starts shard number o.shards, waits until it leads and every
// other shard's leader counts it, and times one more push, which must
// reach every app, those of the clusters that moved through the new
// shard. No other role may restart meanwhile.
func (r *scaleResult) addShard(ctx context.Context, mgmt *localcluster.Cluster, in *roles.Installation, dests []*localcluster.Cluster, c *client.Client, repoURL string) error {
	o := r.o
	rb := &rebalanceFigures{shard: o.shards}
	r.rebalance = rb
	before, err := o.owners(dests, o.shards)
	if err != nil {
		return err
	}
	after, err := o.owners(dests, o.shards+1)
	if err != nil {
		return err
	}
	for k, d := range dests {
		if after[d] != before[d] {
			_, name := scaleApp(k, o.clusters)
			rb.moved = append(rb.moved, name)
		}
	}
	pids := map[*roles.Role]int{}
	leaders := map[*roles.Role]bool{}
	for shard := range o.shards {
		l, holder := in.Leader(ctx, shard)
		if l == nil {
			return fmt.Errorf("shard %d has no running leader (Lease held by %q)", shard, holder)
		}
		leaders[l] = true
	}
	for _, role := range in.All() {
		if role.Running() { // not a leader killed before
			pids[role] = role.PID()
		}
	}
	o.log.Info("adding a shard", "shard", o.shards, "moving", rb.moved)
	added, err := in.AddController(ctx, o.shards, o.shards)
	if err != nil {
		return err
	}
	var leading time.Time
	for {
		if l, _ := in.Leader(ctx, o.shards); l == added {
			leading = time.Now()
			break
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("the added shard never led: %w", err)
		}
	}
	counted := fmt.Sprintf(`msg="controller shard count changed: rebalancing the clusters" shard=%%d from=%d to=%d`, o.shards, o.shards+1)
	for l := range leaders {
		var shard int
		if _, err := fmt.Sscanf(l.Name, "controller-%d-", &shard); err != nil {
			return err
		}
		want := fmt.Sprintf(counted, shard)
		for !strings.Contains(l.Log(), want) {
			if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
				return fmt.Errorf("%s never counted the added shard: %w", l.Name, err)
			}
		}
	}
	rb.counted = time.Since(leading)
	f, err := r.measurePush(ctx, mgmt, in, c, repoURL, len(r.pushes)+1)
	if err != nil {
		return err
	}
	rb.push = f
	if rb.reconciles, _, err = metricOf(ctx, strings.TrimSuffix(added.Health, "/healthz")+"/metrics", "graphcd_app_reconciles_total"); err != nil {
		return err
	}
	if moved := len(rb.moved); moved > 0 && rb.reconciles < float64(o.apps/o.clusters*moved) {
		r.failures = append(r.failures, fmt.Sprintf("the added shard reconciled %.0f times, fewer than the %d apps of the %d clusters it won", rb.reconciles, o.apps/o.clusters*moved, moved))
	}
	for role, pid := range pids {
		if role.PID() != pid || !role.Running() {
			r.failures = append(r.failures, fmt.Sprintf("%s restarted or stopped while a shard was added", role.Name))
		}
	}
	return nil
}

// checkApps checks that every app synced once (one history entry: a sync
// the killed leader left half done was finished, not run again) and that
// its ConfigMap is on its destination cluster and nowhere else.
func (r *scaleResult) checkApps(ctx context.Context, dyn dynamic.Interface, appsGVR schema.GroupVersionResource, dests []*localcluster.Cluster) error {
	list, err := dyn.Resource(appsGVR).Namespace(r.o.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var twice []string
	for _, a := range list.Items {
		history, _, _ := unstructured.NestedSlice(a.Object, "status", "history")
		if len(history) != 1 {
			twice = append(twice, fmt.Sprintf("%s (%d)", a.GetName(), len(history)))
		}
	}
	if len(twice) > 0 {
		slices.Sort(twice)
		r.failures = append(r.failures, fmt.Sprintf("%d apps have not exactly one sync in their history: %s", len(twice), strings.Join(twice[:min(10, len(twice))], ", ")))
	}
	for k, d := range dests {
		_, dest := scaleApp(k, r.o.clusters)
		cms, err := d.Client.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=config"})
		if err != nil {
			return err
		}
		want := 0
		for i := k; i < r.o.apps; i += r.o.clusters {
			want++
		}
		r.clusterApps[dest] = len(cms.Items)
		if len(cms.Items) != want {
			r.failures = append(r.failures, fmt.Sprintf("%s holds %d of the apps' ConfigMaps, want %d", dest, len(cms.Items), want))
		}
		for _, cm := range cms.Items {
			var i int
			if _, err := fmt.Sscanf(cm.Namespace, "app-%d", &i); err != nil || i%r.o.clusters != k {
				r.failures = append(r.failures, fmt.Sprintf("%s holds the ConfigMap of %s, which deploys elsewhere", dest, cm.Namespace))
			}
		}
	}
	return nil
}

// scaleMain is --scale: it starts the management cluster and runs.
func scaleMain(o scaleOptions, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	mgmt, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal, Logger: o.log})
	if err != nil {
		return err
	}
	defer func() { _ = mgmt.Stop() }()
	if o.dir == "" {
		o.dir = mgmt.Dir
	}
	r, err := runScale(ctx, mgmt, o)
	if err != nil {
		return err
	}
	fmt.Println(r.report())
	if o.csv != "" {
		if err := r.appendCSV(o.csv); err != nil {
			return err
		}
	}
	if len(r.failures) > 0 {
		return fmt.Errorf("%d checks failed", len(r.failures))
	}
	return nil
}
