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
	// The labels of notification metrics come from the notifications
	// ConfigMap (at most 500 triggers, and its services), and are those of
	// Argo CD Notifications' argocd_notifications_deliveries_total.
	notificationDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "graphcd_notifications_deliveries_total",
		Help: "Notification sends recorded on Applications, by service (notifier), trigger and whether the send succeeded. A failed send that is retried counts once per attempt.",
	}, []string{"notifier", "trigger", "succeeded"})
	notificationSendSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "graphcd_notifications_send_duration_seconds",
		Help:    "How long rendering and sending one notification took, by service (notifier), whatever its outcome.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20},
	}, []string{"notifier"})
	impersonatingClients = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "graphcd_impersonating_clients_created_total",
		Help: "Clients built to impersonate a destination service account (sync impersonation). Each is kept per cluster and account, so this grows with new accounts and cluster Secret changes, not with syncs.",
	})
)

func init() {
	crmetrics.Registry.MustRegister(appReconciles, clusterCacheRunning, impersonatingClients, notificationDeliveries, notificationSendSeconds)
}
