//go:build integration

package deploy_test

import (
	"net/http"
	"sync"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/testenv/install"
)

// checkLeasePriority makes Lease requests as the controller's
// ServiceAccount and wants API Priority and Fairness to have put them on
// the built-in leader-election priority level (the FlowSchema of
// deploy/ha), and its other requests where every ServiceAccount's go.
func checkLeasePriority(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	levels := map[string]string{} // priority level UID → name
	pls, err := cluster.Client.FlowcontrolV1().PriorityLevelConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pl := range pls.Items {
		levels[string(pl.UID)] = pl.Name
	}
	var mu sync.Mutex
	var last string
	cfg := install.AsServiceAccount(cluster.Config, ns, "graphcd-controller")
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				mu.Lock()
				last = levels[resp.Header.Get("X-Kubernetes-PF-PriorityLevel-UID")]
				mu.Unlock()
			}
			return resp, err
		})
	}
	c := kubernetes.NewForConfigOrDie(cfg)
	level := func() string { mu.Lock(); defer mu.Unlock(); return last }
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-controller-shard-0"}}
	if lease, err = c.CoordinationV1().Leases(ns).Create(ctx, lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := level(); got != "leader-election" {
		t.Errorf("the controller's Lease create went to priority level %q, want leader-election", got)
	}
	if _, err := c.CoordinationV1().Leases(ns).Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := level(); got != "leader-election" {
		t.Errorf("the controller's Lease update went to priority level %q, want leader-election", got)
	}
	if _, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "graphcd-cm", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := level(); got != "workload-low" {
		t.Errorf("the controller's ConfigMap get went to priority level %q, want workload-low", got)
	}
	if err := c.CoordinationV1().Leases(ns).Delete(ctx, lease.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
