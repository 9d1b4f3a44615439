//go:build integration

package controller_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// A destination cluster that goes away while its cache runs: its app is
// reported with a ComparisonError saying the cluster is unreachable and
// sync status Unknown, while an app of another cluster keeps being
// compared; once the cluster is back, the app is compared and synced
// again without any restart.
func TestClusterUnreachable(t *testing.T) {
	t.Parallel()
	far, err := localcluster.Start(t.Context(), localcluster.Options{Mode: localcluster.Minimal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := far.Stop(); err != nil {
			t.Errorf("stop the cluster: %v", err)
		}
	})
	name := uniqueName("far")
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: name, Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster}},
		StringData: clusterSecretData(t, far, name, ""),
	}
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(appNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	farApp := uniqueName("far-app")
	farNS := uniqueName("far")
	_, _, _ = newAppWith(t, farApp, map[string]string{"app/cm.yaml": configMap(farNS, farApp, "a")}, func(a *v1alpha1.Application) {
		a.Spec.Destination = v1alpha1.ApplicationDestination{Name: name, Namespace: farNS}
		a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{
			Automated:   &v1alpha1.SyncPolicyAutomated{SelfHeal: true},
			SyncOptions: []string{"CreateNamespace=true"},
		}
	})
	synced := func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == v1alpha1.HealthStatusHealthy && len(s.Conditions) == 0
	}
	waitStatus(t, farApp, "synced onto the far cluster", synced)
	nearApp := uniqueName("near-app")
	_, _, _ = newAppWith(t, nearApp, map[string]string{"app/cm.yaml": configMap("DEST", nearApp, "a")}, nil)
	waitStatus(t, nearApp, "compared", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeOutOfSync && len(s.Conditions) == 0
	})

	if err := far.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	app := waitStatus(t, farApp, "reported its cluster unreachable", func(s *v1alpha1.ApplicationStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError && strings.Contains(c.Message, "cluster unreachable since") {
				return s.Sync.Status == v1alpha1.SyncStatusCodeUnknown
			}
		}
		return false
	})
	t.Logf("while the cluster is away: sync %s, conditions %v", app.Status.Sync.Status, app.Status.Conditions)
	// The other cluster's app still syncs.
	requestSync(t, nearApp, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, nearApp, "synced while the far cluster is away", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced && len(s.Conditions) == 0
	})

	if err := far.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, farApp, "synced again once its cluster is back", synced)
}
