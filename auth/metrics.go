package auth

import "github.com/prometheus/client_golang/prometheus"

// loginRequests is Argo CD's argocd_login_request_total: local account
// logins by outcome, "success" or "failure" (a wrong password, an unknown
// user, a login refused by the failure limits or an error).
var loginRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "graphcd_login_request_total",
	Help: "Logins of local accounts with a password, by outcome: success or failure (refused, rate limited or failed).",
}, []string{"status"})

// Collectors returns the metrics of the sessions.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{loginRequests}
}

func countLogin(err error) {
	status := "success"
	if err != nil {
		status = "failure"
	}
	loginRequests.WithLabelValues(status).Inc()
}

func init() {
	// Both series from the start, so that a rate of failures reads 0, not
	// nothing, before the first one.
	loginRequests.WithLabelValues("success")
	loginRequests.WithLabelValues("failure")
}
