//go:build integration

package controller_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
)

// The queue of status writes writes only once its writers run, writes
// the latest status queued for an app, and a flush (what every reconcile
// starts with) returns once the app's queued status is in the API. The
// app lives in a namespace the package's controller does not watch, so
// only this test writes its status.
func TestQueuedStatusWrites(t *testing.T) {
	t.Parallel()
	const ns = "queued-status-writes"
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: "queued", Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: ns},
		},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: app.Name}
	r, err := controller.NewReconciler(apps, controller.Options{})
	if err != nil {
		t.Fatal(err)
	}
	writes := controller.StatusWritesOf(r)
	status := func(sync v1alpha1.SyncStatusCode, revision string) *v1alpha1.ApplicationStatus {
		return &v1alpha1.ApplicationStatus{Sync: v1alpha1.SyncStatus{Status: sync, Revision: revision}}
	}
	written := func() v1alpha1.SyncStatus {
		t.Helper()
		var got v1alpha1.Application
		if err := apps.Get(t.Context(), key, &got); err != nil {
			t.Fatal(err)
		}
		return got.Status.Sync
	}

	if writes.Enqueue(app.DeepCopy(), status(v1alpha1.SyncStatusCodeSynced, "a")) {
		t.Fatal("queued a write with no writer running")
	}

	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- writes.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("writers: %v", err)
		}
	}()
	// Start runs in its goroutine: wait until it takes writes.
	poll(t, "writers running", func(context.Context) (bool, error) {
		return writes.Enqueue(app.DeepCopy(), status(v1alpha1.SyncStatusCodeOutOfSync, "b")), nil
	})
	// A newer status of the same app replaces one not yet written.
	writes.Enqueue(app.DeepCopy(), status(v1alpha1.SyncStatusCodeSynced, "c"))
	if err := writes.Flush(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if got := written(); got.Status != v1alpha1.SyncStatusCodeSynced || got.Revision != "c" {
		t.Errorf("after flush the API has %+v, want Synced at c", got)
	}

	// Without a flush the writers write it on their own.
	var fresh v1alpha1.Application
	if err := apps.Get(t.Context(), key, &fresh); err != nil {
		t.Fatal(err)
	}
	writes.Enqueue(&fresh, status(v1alpha1.SyncStatusCodeOutOfSync, "d"))
	poll(t, "queued status written", func(context.Context) (bool, error) {
		got := written()
		return got.Status == v1alpha1.SyncStatusCodeOutOfSync && got.Revision == "d", nil
	})
}
