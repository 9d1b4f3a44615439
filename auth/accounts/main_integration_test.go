//go:build integration

package accounts

import (
	"context"
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	adminCost = bcrypt.MinCost
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// startStore writes cm and secret (nil: none) into a new namespace and
// returns a started store of it, hashing at the lowest cost.
func startStore(t *testing.T, cm map[string]string, secret map[string][]byte) (*Store, string) {
	t.Helper()
	ns := cluster.Namespace(t)
	ctx := t.Context()
	if cm != nil {
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName}, Data: cm}
		if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if secret != nil {
		obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName}, Data: secret}
		if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	s := NewStore(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	s.cost = bcrypt.MinCost
	if err := s.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, ns
}

// waitUntil returns once cond holds, re-checking on every change the
// store sees; the test's deadline bounds it.
func waitUntil(t *testing.T, s *Store, what string, cond func() bool) {
	t.Helper()
	for {
		s.mu.RLock()
		changed := s.changed
		s.mu.RUnlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatalf("gave up waiting until %s", what)
		}
	}
}

func hash(t *testing.T, password string) []byte {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func readSecret(t *testing.T, ctx context.Context, ns, name string) map[string][]byte {
	t.Helper()
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sec.Data
}
