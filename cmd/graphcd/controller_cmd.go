package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/eventbus"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/redismetrics"
	"github.com/graphcd/graphcd/internal/version"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

// defaultControllerMetricsListen is where `graphcd controller` serves
// /metrics and /healthz (Argo CD's application controller uses 8082 too).
const defaultControllerMetricsListen = "127.0.0.1:8082"

// controllerOptions are the flags of `graphcd controller`.
type controllerOptions struct {
	app           appControllerOptions
	kube          kubeconn.Limits
	repoServer    repoServerClientOptions
	render        renderworker.Options
	shared        sharedOptions
	tracing       tracingOptions
	metricsListen string
	profile       profileListener
}

func newControllerCmd(root *rootOptions) *cobra.Command {
	o := &controllerOptions{}
	c := &cobra.Command{
		Use:   "controller",
		Short: "Run only the Application controller: one shard, with leader election among its replicas",
		Long: `Run the Application controller on its own, for installs that split the
roles. Destination clusters are split into --shards shards by consistent
hashing of their server URL; this process reconciles the apps of shard
--shard only. Replicas of the same shard compete for the Lease
graphcd-controller-shard-<N> in --namespace, and only its holder
reconciles; the others stand by without informers and take over when it
stops. /metrics and /healthz are served on --metrics-listen. With
--redis (and --redis-secret-file) its reconciliation events and the
applications' resource trees reach every API replica started with the same
flags.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runControllerCmd(c.Context(), c, root, o)
		},
	}
	f := c.Flags()
	o.app.addFlags(f, true)
	o.kube.AddFlags(f)
	o.repoServer.addFlags(f)
	o.render.AddFlags(f)
	o.shared.addFlags(f)
	o.tracing.addFlags(f)
	f.StringVar(&o.metricsListen, "metrics-listen", defaultControllerMetricsListen, "address to serve /metrics and /healthz on; 0 serves neither")
	o.profile.addFlags(c)
	return c
}

func runControllerCmd(ctx context.Context, c *cobra.Command, root *rootOptions, o *controllerOptions) error {
	if err := o.app.validate(c); err != nil {
		return err
	}
	if o.metricsListen != "0" {
		if err := checkListen(ctx, o.metricsListen); err != nil {
			return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", command.FlagOrigin(c, "metrics-listen"), err)}
		}
	}
	log := root.log
	flushTraces, err := o.tracing.start(ctx, c, "graphcd-controller", log)
	if err != nil {
		return err
	}
	defer flushTraces()
	if err := o.profile.serve(ctx, c, log); err != nil {
		return err
	}
	k, err := kubeconn.Connect(ctx, kubeconn.Options{
		Kubeconfig: root.kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig"), Limits: o.kube,
	})
	if err != nil {
		return err
	}
	traceKubernetes(k.Config)
	build := version.Get()
	log.Info("graphcd controller starting", "version", build.Version, "commit", build.Commit)
	log.Info("connected to Kubernetes API", "host", k.Host, "version", k.ServerVersion)

	client, err := o.repoServer.dial(c)
	if err != nil {
		return err
	}
	var svc reposerver.Service = client
	if client != nil {
		defer func() { _ = client.Close() }()
		log.Info("rendering with a separate repo-server", "addr", o.repoServer.addr)
	} else {
		worker, err := o.render.Worker(c)
		if err != nil {
			return err
		}
		local, cleanup, err := localRepoServer(ctx, log, worker)
		if err != nil {
			return err
		}
		defer cleanup()
		svc = local
		if err := registerAll(crmetrics.Registry, inproc.Collectors()); err != nil {
			return fmt.Errorf("register repository server metrics: %w", err)
		}
	}
	cfg := o.app.config()
	cfg.Repo, cfg.Logger, cfg.MetricsListen = svc, log, o.metricsListen
	cfg.Memory = memoryGuard(ctx, log)
	if err := registerAll(crmetrics.Registry, memguard.Collectors()); err != nil {
		return fmt.Errorf("register memory metrics: %w", err)
	}
	// Live events and resource trees leave this process only through
	// Redis: without it, no API replica could read them.
	var events eventbus.Bus
	var started func(*controller.Controller)
	if o.shared.redisAddr != "" {
		sh, err := o.shared.connect(ctx, c, log, redismetrics.Controller)
		if err != nil {
			return err
		}
		if err := registerAll(crmetrics.Registry, redismetrics.Collectors()); err != nil {
			return fmt.Errorf("register Redis metrics: %w", err)
		}
		events, cfg.State, cfg.Status = sh.events, sh.states, sh.status
		if started, err = servePushes(ctx, sh, log, nil); err != nil {
			return err
		}
	}
	if err := runController(ctx, k, cfg, events, started); err != nil {
		return fmt.Errorf("application controller: %w", err)
	}
	log.Info("graphcd controller stopped")
	return nil
}

// registerAll registers cs in reg; one already there (a controller started
// again in the process) is kept.
func registerAll(reg prometheus.Registerer, cs []prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}
