//go:build integration

package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"

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
	app := unwatchedApp(t, "queued-status-writes", "queued")
	key := types.NamespacedName{Namespace: app.Namespace, Name: app.Name}
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

// A periodic refresh that found nothing new writes reconciledAt alone,
// once the last one is a resync period old, on the resourceVersion it
// read: a write by someone else in between is kept, and the status
// written is the one the refresh computed. Both ways of writing status:
// through the client, and through the metadata client the controller
// uses.
func TestReconciledAtWrites(t *testing.T) {
	t.Parallel()
	meta, err := metadata.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts controller.Options
	}{
		{"client", controller.Options{Resync: time.Minute}},
		{"metadata", controller.Options{Resync: time.Minute, Metadata: meta}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := "reconciled-at-" + tc.name
			app := unwatchedApp(t, ns, "refreshed")
			key := types.NamespacedName{Namespace: ns, Name: app.Name}
			r, err := controller.NewReconciler(apps, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			computed := v1alpha1.ApplicationStatus{
				Sync:   v1alpha1.SyncStatus{Status: v1alpha1.SyncStatusCodeSynced, Revision: "a"},
				Health: v1alpha1.HealthStatus{Status: "Healthy"},
				Resources: []v1alpha1.ResourceStatus{{
					Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "web", Status: v1alpha1.SyncStatusCodeSynced,
				}},
			}
			stored := func() *v1alpha1.Application {
				t.Helper()
				var got v1alpha1.Application
				if err := apps.Get(t.Context(), key, &got); err != nil {
					t.Fatal(err)
				}
				return &got
			}
			write := func(at time.Time) {
				t.Helper()
				if err := controller.WriteStatus(t.Context(), r, app, computed.DeepCopy(), metav1.NewTime(at)); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now().Truncate(time.Second)
			write(start)
			first := stored()

			// Within the period: nothing written.
			write(start.Add(30 * time.Second))
			if got := stored(); got.ResourceVersion != first.ResourceVersion {
				t.Errorf("wrote within the resync period: resourceVersion %s, was %s", got.ResourceVersion, first.ResourceVersion)
			}

			// Someone else writes meanwhile; the refresh a period later keeps it.
			other := first.DeepCopy()
			other.Annotations = map[string]string{"team": "web"}
			if err := apps.Update(t.Context(), other); err != nil {
				t.Fatal(err)
			}
			later := start.Add(time.Minute)
			write(later)
			got := stored()
			if got.Status.ReconciledAt == nil || !got.Status.ReconciledAt.Time.Equal(later) {
				t.Errorf("reconciledAt %v, want %v", got.Status.ReconciledAt, later)
			}
			if got.Annotations["team"] != "web" {
				t.Errorf("the other write's annotation is gone: %v", got.Annotations)
			}
			want := computed.DeepCopy()
			want.ReconciledAt = got.Status.ReconciledAt
			if !equality.Semantic.DeepEqual(got.Status, *want) {
				t.Errorf("status written:\n%+v\nwant\n%+v", got.Status, *want)
			}
			if app.ResourceVersion != got.ResourceVersion || !equality.Semantic.DeepEqual(app.Status, got.Status) {
				t.Errorf("the app written holds resourceVersion %s and status %+v; the API %s and %+v",
					app.ResourceVersion, app.Status, got.ResourceVersion, got.Status)
			}

			// A refresh a period after that writes reconciledAt alone.
			last := later.Add(time.Minute)
			write(last)
			if got := stored(); got.Status.ReconciledAt == nil || !got.Status.ReconciledAt.Time.Equal(last) {
				t.Errorf("reconciledAt %v, want %v", got.Status.ReconciledAt, last)
			}
		})
	}
}

// unwatchedApp creates the namespace ns, which the package's controller
// does not watch, and in it an app name whose status only the test
// writes.
func unwatchedApp(t *testing.T, ns, name string) *v1alpha1.Application {
	t.Helper()
	if _, err := cluster.Client.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: ns},
		},
	}
	if err := apps.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	return app
}
