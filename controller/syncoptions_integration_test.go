//go:build integration

package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// keyID is the long key ID of the armored public key.
func keyID(t *testing.T, armored string) string {
	t.Helper()
	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil || len(ring) != 1 {
		t.Fatalf("read the signing key: %d keys, %v", len(ring), err)
	}
	return ring[0].PrimaryKey.KeyIdString()
}

// A project with signatureKeys refuses to sync an unsigned commit, with
// the repository server's message and nothing applied, and syncs a commit
// signed by its key.
func TestSignatureKeysGateSync(t *testing.T) {
	t.Parallel()
	dest := cluster.Namespace(t)
	signedDir, sha, armored := reposervertest.CommitSigned(t, map[string]string{"app/cm.yaml": configMap(dest, "signed-app", "signed")})
	id := keyID(t, armored)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: manifests.GPGKeysConfigMap},
		Data:       map[string]string{id: armored},
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(appNamespace).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().ConfigMaps(appNamespace).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	newProject(t, "signed-only", v1alpha1.AppProjectSpec{
		SourceRepos:   []string{"*"},
		Destinations:  []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		SignatureKeys: []v1alpha1.SignatureKey{{KeyID: id}},
	})

	const unsigned = "unsigned-app"
	_, udest, _ := newAppWith(t, unsigned, map[string]string{"app/cm.yaml": configMap("DEST", unsigned, "x")},
		func(a *v1alpha1.Application) { a.Spec.Project = "signed-only" })
	requestSync(t, unsigned, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, unsigned, "refused", opDone(v1alpha1.OperationFailed))
	if msg := app.Status.OperationState.Message; !strings.Contains(msg, "commit is not signed") {
		t.Errorf("message %q, want it to name the missing signature", msg)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(udest).Get(t.Context(), "settings", metav1.GetOptions{}); err == nil {
		t.Errorf("the unsigned commit's ConfigMap was applied")
	}

	const signed = "signed-app"
	a := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: signed, Namespace: appNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "signed-only",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + signedDir, Path: "app", TargetRevision: sha},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
	}
	if err := apps.Create(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apps.Delete(context.Background(), a) })
	requestSync(t, signed, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, signed, "synced", opDone(v1alpha1.OperationSucceeded))
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{}); err != nil {
		t.Errorf("the signed commit's ConfigMap was not applied: %v", err)
	}
}

// With FailOnSharedResource, a sync that would take over an object another
// app tracks fails with Argo CD's message before applying anything.
func TestFailOnSharedResource(t *testing.T) {
	t.Parallel()
	const owner, taker = "shared-owner", "shared-taker"
	dest, _ := newApp(t, owner, map[string]string{"app/cm.yaml": configMap("DEST", owner, "mine")})
	requestSync(t, owner, manual(v1alpha1.SyncOperation{}))
	waitStatus(t, owner, "synced", func(s *v1alpha1.ApplicationStatus) bool {
		return opDone(v1alpha1.OperationSucceeded)(s) && s.Sync.Status == v1alpha1.SyncStatusCodeSynced
	})
	extra := strings.Replace(configMap(dest, taker, "extra"), "name: settings", "name: extra", 1)
	newAppWith(t, taker, map[string]string{"app/cm.yaml": configMap(dest, taker, "theirs"), "app/extra.yaml": extra},
		func(a *v1alpha1.Application) {
			a.Spec.Destination.Namespace = dest
			a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: []string{"FailOnSharedResource=true"}}
		})
	requestSync(t, taker, manual(v1alpha1.SyncOperation{}))
	app := waitStatus(t, taker, "refused", opDone(v1alpha1.OperationFailed))
	want := fmt.Sprintf("Shared resource found: ConfigMap %s/settings is already managed by application %s", dest, owner)
	if msg := app.Status.OperationState.Message; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	got, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil || got.Data["mode"] != "mine" {
		t.Errorf("the shared ConfigMap changed: %v %v", got.Data, err)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "extra", metav1.GetOptions{}); err == nil {
		t.Errorf("the refused sync applied ConfigMap extra")
	}
}

// With RespectIgnoreDifferences, a sync leaves the fields ignoreDifferences
// covers as they are live; without it, the sync puts back Git's value.
func TestRespectIgnoreDifferences(t *testing.T) {
	t.Parallel()
	for _, respect := range []bool{true, false} {
		t.Run(fmt.Sprintf("respect=%v", respect), func(t *testing.T) {
			t.Parallel()
			name := fmt.Sprintf("respect-%v", respect)
			_, dest, _ := newAppWith(t, name, map[string]string{"app/deploy.yaml": deployment("DEST", name)}, func(a *v1alpha1.Application) {
				a.Spec.IgnoreDifferences = []v1alpha1.ResourceIgnoreDifferences{{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}}}
				if respect {
					a.Spec.SyncPolicy = &v1alpha1.SyncPolicy{SyncOptions: []string{"RespectIgnoreDifferences=true"}}
				}
			})
			requestSync(t, name, manual(v1alpha1.SyncOperation{}))
			waitStatus(t, name, "synced", opDone(v1alpha1.OperationSucceeded))
			scaleWeb(t, dest, 5)
			requestSync(t, name, manual(v1alpha1.SyncOperation{}))
			waitStatus(t, name, "synced again", func(s *v1alpha1.ApplicationStatus) bool {
				return opDone(v1alpha1.OperationSucceeded)(s) && len(s.History) == 2
			})
			want := int32(2)
			if respect {
				want = 5
			}
			d, err := cluster.Client.AppsV1().Deployments(dest).Get(t.Context(), "web", metav1.GetOptions{})
			if err != nil || *d.Spec.Replicas != want {
				t.Errorf("replicas after the sync: %v %v, want %d", d.Spec.Replicas, err, want)
			}
		})
	}
}
