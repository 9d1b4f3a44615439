//go:build integration

package reliability

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// clusterAwayFor is how long the destination cluster stays away: longer
// than the controller's unreachableAfter (30 s), so that its apps are
// reported.
func clusterAwayFor() time.Duration {
	if full() {
		return 10 * time.Minute
	}
	return time.Minute
}

// farApps is how many apps deploy onto the far cluster.
const farApps = 2

// A destination cluster away: a second cluster (its own etcd and
// kube-apiserver) registered by a cluster Secret that pins it to the
// shard not owning the management cluster, with auto-synced apps of the
// background path on it. First that shard's leader is killed just after
// a push (the second shard's fault: its standby must take over and sync
// the far apps); then the far cluster has its kube-apiserver stopped for
// clusterAwayFor, then started again. While it is away its apps must show
// sync status Unknown with a ComparisonError saying the cluster is
// unreachable, and the background apps on the management cluster must
// keep syncing the pushes. Recovery: from the cluster back until its apps
// synced the repository's head with no condition left. (Its Deployments
// stay Progressing: that cluster runs no controllers.)
func clusterAway(t *testing.T, in *installation, l *load) []outcome {
	far, err := localcluster.Start(t.Context(), localcluster.Options{Mode: localcluster.Minimal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := far.Stop(); err != nil {
			t.Errorf("stop the far cluster: %v", err)
		}
	})
	const name = "far"
	shard := shards - 1 - inClusterShard(t) // the other of the two
	cfg, err := far.SecretConfig()
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: graphcdNamespace, Name: name, Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster}},
		StringData: map[string]string{"name": name, "server": far.Config.Host, "config": cfg, "shard": strconv.Itoa(shard)},
	}
	if _, err := cluster.Client.CoreV1().Secrets(graphcdNamespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(graphcdNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	var apps []string
	for i := range farApps {
		app := fmt.Sprintf("far-%d", i)
		in.newAppIn(t, app, backgroundApp, fmt.Sprintf("far-%d", i), func(a *v1alpha1.Application) {
			a.Spec.Destination = v1alpha1.ApplicationDestination{Name: name, Namespace: a.Spec.Destination.Namespace}
			a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true},
				SyncOptions: []string{"CreateNamespace=true"},
			}
		})
		apps = append(apps, app)
	}
	synced := func() (bool, string) {
		head, err := in.git.head(t.Context())
		if err != nil {
			return false, err.Error()
		}
		for _, app := range apps {
			a, err := in.app(t.Context(), app)
			if err != nil {
				return false, err.Error()
			}
			s := a.Status
			if s.Sync.Status != v1alpha1.SyncStatusCodeSynced || s.Sync.Revision != head || len(s.Conditions) > 0 || a.Operation != nil {
				return false, fmt.Sprintf("%s: sync %s at %.7s (want %.7s), conditions %v", app, s.Sync.Status, s.Sync.Revision, head, s.Conditions)
			}
		}
		return true, ""
	}
	waitFor(t, 5*time.Minute, "the far cluster's apps to sync", func() (bool, string) {
		l.pushing.Store(false)
		return synced()
	})

	// The far cluster's shard loses its leader just after a push.
	leader, standby := in.leader(t, shard)
	if _, err := in.push(t.Context()); err != nil {
		t.Fatal(err)
	}
	killed, takeover := killLeader(t, in, shard, leader, standby)
	waitFor(t, 5*time.Minute, "the far cluster's apps to sync the push after the kill", synced)
	afterKill := time.Since(killed)
	l.pushing.Store(true)
	startRole(t, leader) // back as the standby

	gone := time.Now() // the SIGTERM: kube-apiserver refuses from then on while it shuts down
	if err := far.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	var reason string
	waitFor(t, clusterAwayFor()+time.Minute, "the far cluster's apps to show it unreachable", func() (bool, string) {
		for _, app := range apps {
			a, err := in.app(t.Context(), app)
			if err != nil {
				return false, err.Error()
			}
			found := false
			for _, c := range a.Status.Conditions {
				if c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, "cluster unreachable") {
					found, reason = true, c.Message
				}
			}
			if !found || a.Status.Sync.Status != v1alpha1.SyncStatusCodeUnknown {
				return false, fmt.Sprintf("%s: sync %s, conditions %v", app, a.Status.Sync.Status, a.Status.Conditions)
			}
		}
		return true, ""
	})
	reported := time.Since(gone)
	if reported > clusterAwayFor() {
		t.Errorf("the far cluster's apps showed it unreachable only %v after it went away, after it was back", reported.Round(time.Second))
	}
	// The management cluster's apps keep syncing meanwhile.
	l.settle(t)
	time.Sleep(time.Until(gone.Add(clusterAwayFor())))
	if err := far.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	waitFor(t, 5*time.Minute, "the far cluster's apps to sync the head again", synced)
	settled := time.Now()
	return []outcome{{
		fault:    "`kill -9` of the second shard's leader (the far cluster's) just after a push",
		recovery: afterKill,
		note:     fmt.Sprintf("the standby took the Lease after %.1f s; the far cluster's %d apps synced the push", takeover.Seconds(), farApps),
	}, {
		fault:    fmt.Sprintf("a destination cluster away (kube-apiserver stopped) for %v", clusterAwayFor()),
		recovery: settled.Sub(back),
		note: fmt.Sprintf("its %d apps showed sync Unknown %.0f s after it went, %q; the management cluster's apps kept syncing pushes meanwhile",
			farApps, reported.Seconds(), redactPort(reason)),
	}}
}

// redactPort shortens a condition message for the table: the loopback
// address is the run's.
func redactPort(msg string) string {
	if i := strings.Index(msg, ": Get "); i >= 0 {
		return msg[:i] + ": ..."
	}
	return msg
}
