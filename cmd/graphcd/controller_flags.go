package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/controller/project"
)

// appControllerOptions are the Application controller flags that
// `graphcd server` and `graphcd controller` share.
type appControllerOptions struct {
	namespace     string
	appNamespaces []string
	// served is namespace with appNamespaces, compiled by validate.
	served        *project.AppNamespaces
	appResync     time.Duration
	events        controller.EventBudget
	shard, shards int
	shardMethod   string
	dynamicShards bool
	processors    int
	leaderElect   bool
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
	allowedSCM    []string
	enableSCM     bool
	argoCDNames   bool
}

// addFlags adds the flags; leaderElect is the default of --leader-elect.
func (o *appControllerOptions) addFlags(f *pflag.FlagSet, leaderElect bool) {
	f.StringVar(&o.namespace, "namespace", "graphcd", "namespace of the Applications, settings and repository Secrets")
	f.StringSliceVar(&o.appNamespaces, "application-namespaces", nil,
		"more namespaces whose Applications are served, comma-separated: names, globs (team-*) or /regular expressions/; each app's project must allow its namespace in spec.sourceNamespaces")
	f.DurationVar(&o.appResync, "app-resync", 180*time.Second, "periodic refresh of every application, as Argo CD's timeout.reconciliation (plus up to half as jitter)")
	f.Float64Var(&o.events.QPS, "event-qps", controller.DefaultEventBudget.QPS,
		"Kubernetes Events recorded per second at most, as the kubelet's flag: those over it and --event-burst are dropped and counted (graphcd_controller_events_dropped_total); 0 records every Event")
	f.IntVar(&o.events.Burst, "event-burst", controller.DefaultEventBudget.Burst, "Kubernetes Events that may be recorded at once, over --event-qps")
	f.IntVar(&o.processors, "status-processors", controller.DefaultProcessors, "how many applications are compared (and synced) at once")
	f.IntVar(&o.shard, "shard", 0, "the shard this controller reconciles, from 0 to --shards - 1")
	f.IntVar(&o.shards, "shards", 1, "how many shards split the destination clusters (see --sharding-method)")
	f.StringVar(&o.shardMethod, "sharding-method", string(controller.ShardByHash),
		"how the shards split the clusters: hash (each cluster by its server URL alone; a change moves the fewest clusters) or round-robin (the clusters sorted by server URL dealt in turn, as Argo CD's round-robin: even, but a new cluster or shard moves those after it); every shard must use the same")
	f.BoolVar(&o.dynamicShards, "dynamic-shards", false,
		"count the shards from their Leases, --shards being the fewest: a controller started with a new --shard joins, and the others hand it its clusters without a restart; a shard gone for a minute hands them back")
	f.BoolVar(&o.leaderElect, "leader-elect", leaderElect, "compete for the shard's Lease so that one replica at a time reconciles")
	f.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", controller.DefaultLeaseDuration, "how long standbys wait before taking over from a leader that stopped renewing")
	f.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", controller.DefaultRenewDeadline, "how long the leader retries renewing its Lease before it stops")
	f.DurationVar(&o.retryPeriod, "leader-elect-retry-period", controller.DefaultRetryPeriod, "how often replicas try to acquire or renew the Lease")
	f.StringSliceVar(&o.allowedSCM, "allowed-scm-providers", nil,
		"API URLs, comma-separated, that ApplicationSets' SCM provider and pull request generators may name as their api besides the forges' public ones (github.com, gitlab.com, bitbucket.org, gitea.com); a URL allows the URLs under it")
	f.BoolVar(&o.enableSCM, "enable-scm-providers", true, "run ApplicationSets' SCM provider and pull request generators")
	f.BoolVar(&o.argoCDNames, "metrics-argocd-names", false, "serve the metrics Argo CD also has under its argocd_ names too (argocd_app_info ...), for dashboards and alerts written for Argo CD")
}

// validate checks the flags before anything starts (the Lease timings only
// with --leader-elect). Its errors are usage errors: one line, exit code 2.
func (o *appControllerOptions) validate(c *cobra.Command) error {
	usage := func(format string, args ...any) error {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf(format, args...)}
	}
	served, err := project.CompileAppNamespaces(o.namespace, o.appNamespaces)
	if err != nil {
		return usage("%s: %w", command.FlagOrigin(c, "application-namespaces"), err)
	}
	o.served = served
	if o.appResync < 0 {
		return usage("%s: must not be negative, got %s", command.FlagOrigin(c, "app-resync"), o.appResync)
	}
	if o.events.QPS < 0 {
		return usage("%s: must not be negative, got %g", command.FlagOrigin(c, "event-qps"), o.events.QPS)
	}
	if o.events.Burst < 1 {
		return usage("%s: must be at least 1, got %d", command.FlagOrigin(c, "event-burst"), o.events.Burst)
	}
	if o.processors < 1 {
		return usage("%s: must be at least 1, got %d", command.FlagOrigin(c, "status-processors"), o.processors)
	}
	if o.shards < 1 {
		return usage("%s: must be at least 1, got %d", command.FlagOrigin(c, "shards"), o.shards)
	}
	if err := (controller.Shard{Method: controller.ShardMethod(o.shardMethod)}).Validate(); err != nil {
		return usage("%s: %w", command.FlagOrigin(c, "sharding-method"), err)
	}
	if o.dynamicShards && !o.leaderElect {
		return usage("%s needs --leader-elect: the shards are counted from their Leases", command.FlagOrigin(c, "dynamic-shards"))
	}
	if o.shard < 0 || (o.shard >= o.shards && !o.dynamicShards) {
		return usage("%s: must be between 0 and %d with %s %d (shards are numbered from 0), got %d",
			command.FlagOrigin(c, "shard"), o.shards-1, command.FlagOrigin(c, "shards"), o.shards, o.shard)
	}
	if !o.leaderElect {
		return nil
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"leader-elect-lease-duration", o.leaseDuration}, {"leader-elect-renew-deadline", o.renewDeadline}, {"leader-elect-retry-period", o.retryPeriod}} {
		if d.v <= 0 {
			return usage("%s: must be positive, got %s", command.FlagOrigin(c, d.name), d.v)
		}
	}
	if err := o.leaderElection().Validate(); err != nil {
		return usage("%s, %s, %s: %w", command.FlagOrigin(c, "leader-elect-lease-duration"), command.FlagOrigin(c, "leader-elect-renew-deadline"), command.FlagOrigin(c, "leader-elect-retry-period"), err)
	}
	return nil
}

func (o *appControllerOptions) leaderElection() controller.LeaderElection {
	return controller.LeaderElection{
		Enabled: o.leaderElect, LeaseDuration: o.leaseDuration, RenewDeadline: o.renewDeadline, RetryPeriod: o.retryPeriod,
	}
}

// config returns the controller.Config the flags set; runController adds
// the rest.
func (o *appControllerOptions) config() controller.Config {
	return controller.Config{
		Namespace: o.namespace, AppNamespaces: o.served, Resync: o.appResync, Events: o.events, Processors: o.processors,
		Shard:          controller.Shard{Index: o.shard, Count: o.shards, Dynamic: o.dynamicShards, Method: controller.ShardMethod(o.shardMethod)},
		LeaderElection: o.leaderElection(), Forges: o.forges(), MetricsArgoCDNames: o.argoCDNames,
	}
}

// forges are the forges ApplicationSets' SCM provider and pull request
// generators may ask, for the controller and the API's previews alike.
func (o *appControllerOptions) forges() appset.ForgePolicy {
	return appset.ForgePolicy{Disabled: !o.enableSCM, Allowed: o.allowedSCM}
}
