package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics of the Application controller, in controller-runtime's registry
// (served with its own metrics, e.g. controller_runtime_reconcile_total and
// leader_election_master_status, where Config.MetricsListen says).
var (
	appReconciles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_app_reconciles_total",
		Help: "Reconciles of Applications whose destination cluster this replica's shard owns. A standby replica, or a shard that owns none of the apps, stays at 0.",
	}, []string{"shard"})
	clusterCacheRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "graphcd_cluster_cache_running",
		Help: "1 while this replica runs the cluster cache (informers) of a destination cluster, else 0.",
	}, []string{"server"})
	impersonatingClients = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "graphcd_impersonating_clients_created_total",
		Help: "Clients built to impersonate a destination service account (sync impersonation). Each is kept per cluster and account, so this grows with new accounts and cluster Secret changes, not with syncs.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(appReconciles, clusterCacheRunning, impersonatingClients)
}
