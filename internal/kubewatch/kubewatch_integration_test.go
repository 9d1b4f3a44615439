//go:build integration

package kubewatch

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

// Two readers of one Secret share one informer; each sees the current
// version at once, every update, and the deletion; a reader whose context
// ended sees nothing more.
func TestSourceSharesOneWatch(t *testing.T) {
	const ns, name = "default", "shared"
	secrets := cluster.Client.CoreV1().Secrets(ns)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: map[string]string{"k": "1"}}
	if _, err := secrets.Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src := NewSource(t.Context(), cluster.Client, ns)
	var first, second atomic.Pointer[corev1.Secret]
	if err := src.Secret(t.Context(), name, func(s *corev1.Secret) { first.Store(s) }); err != nil {
		t.Fatal(err)
	}
	ctx, stopSecond := context.WithCancel(t.Context())
	if err := src.Secret(ctx, name, func(s *corev1.Secret) { second.Store(s) }); err != nil {
		t.Fatal(err)
	}
	for _, got := range []*corev1.Secret{first.Load(), second.Load()} {
		if got == nil || string(got.Data["k"]) != "1" {
			t.Fatalf("a reader did not see the current Secret: %v", got)
		}
	}
	if n := len(src.informers); n != 1 {
		t.Errorf("%d informers for one Secret, want 1", n)
	}

	stopSecond()
	sec.StringData["k"] = "2"
	if _, err := secrets.Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first reader sees the update", func() bool { s := first.Load(); return s != nil && string(s.Data["k"]) == "2" })
	if s := second.Load(); s == nil || string(s.Data["k"]) != "1" {
		t.Errorf("a stopped reader saw %v", s)
	}
	if err := secrets.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the first reader sees the deletion", func() bool { return first.Load() == nil })
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("test ended waiting until %s", what)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
