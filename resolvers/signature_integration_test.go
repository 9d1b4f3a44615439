//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// A project with signatureKeys refuses a commit none of its keys signed in
// the API exactly as in the controller: Application.manifests is FORBIDDEN
// with the reason of the app's ComparisonError condition. A commit its key
// signed renders in both. A real controller compares.
func TestManifestsRefuseUnsignedCommitsAsTheControllerDoes(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	files := func(mode string) map[string]string {
		return map[string]string{"app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: " + mode + "\n"}
	}
	signedDir, signedSHA, armored := reposervertest.CommitSigned(t, files("signed"))
	unsignedDir, _ := reposervertest.CommitFiles(t, files("unsigned"))
	signedURL, unsignedURL := serveRepo(t, signedDir, "", ""), serveRepo(t, unsignedDir, "", "")

	ring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armored))
	if err != nil || len(ring) != 1 {
		t.Fatalf("read the signing key: %d keys, %v", len(ring), err)
	}
	keyID := ring[0].PrimaryKey.KeyIdString()
	keys := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: manifests.GPGKeysConfigMap},
		Data:       map[string]string{keyID: armored},
	}
	if err := kube.Create(t.Context(), keys); err != nil {
		t.Fatal(err)
	}
	proj := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "signed-" + ns},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:   []string{"*"},
			Destinations:  []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			SignatureKeys: []v1alpha1.SignatureKey{{KeyID: keyID}},
		},
	}
	if err := kube.Create(t.Context(), proj); err != nil {
		t.Fatal(err)
	}
	startController(t, ns)
	for name, src := range map[string]v1alpha1.ApplicationSource{
		"unsigned": {RepoURL: unsignedURL, Path: "app", TargetRevision: "main"},
		"signed":   {RepoURL: signedURL, Path: "app", TargetRevision: signedSHA},
	} {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.ApplicationSpec{
				Project: proj.Name, Source: &src,
				Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
			},
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = kube.Delete(context.Background(), app) })
	}
	waitCount(t, ns, 2)

	// The controller: the unsigned commit is a ComparisonError, the
	// signed one is compared.
	status := func(name string) v1alpha1.ApplicationStatus {
		t.Helper()
		var app v1alpha1.Application
		if err := kube.Get(t.Context(), types.NamespacedName{Namespace: ns, Name: name}, &app); err != nil {
			t.Fatal(err)
		}
		return app.Status
	}
	var reason string
	eventually(t, "the controller refuses the unsigned commit", func() error {
		for _, c := range status("unsigned").Conditions {
			if c.Type == v1alpha1.ApplicationConditionComparisonError {
				reason = strings.TrimPrefix(c.Message, "rendering manifests: ")
				return nil
			}
		}
		return fmt.Errorf("no ComparisonError: %w", errNotYet)
	})
	if !strings.Contains(reason, "commit is not signed") {
		t.Fatalf("the controller's ComparisonError is %q, want it to name the missing signature", reason)
	}
	eventually(t, "the controller compares the signed commit", func() error {
		if st := status("signed"); st.Sync.Revision != signedSHA {
			return fmt.Errorf("sync status %+v, conditions %+v: %w", st.Sync, st.Conditions, errNotYet)
		}
		return nil
	})

	// The API: the same refusal, the same render.
	const manifestsQ = `query($ns: String, $name: String!) { application(name: $name, namespace: $ns) { manifests } }`
	_, resp := query(t, manifestsQ, map[string]any{"ns": ns, "name": "unsigned"})
	if len(resp.Errors) == 0 {
		t.Fatalf("the API rendered the unsigned commit: %s", resp.Data)
	}
	if code, _ := resp.Errors[0].Extensions["code"].(string); code != "FORBIDDEN" {
		t.Errorf("code %q, want FORBIDDEN", code)
	}
	if got, want := resp.Errors[0].Message, "source 1: "+reason; got != want {
		t.Errorf("message %q, want the controller's reason %q", got, want)
	}
	var got struct{ Application struct{ Manifests []string } }
	data(t, manifestsQ, map[string]any{"ns": ns, "name": "signed"}, &got)
	want := []string{"apiVersion: v1\ndata:\n  mode: signed\nkind: ConfigMap\nmetadata:\n  name: settings\n"}
	if diff := cmp.Diff(got.Application.Manifests, want); diff != "" {
		t.Errorf("manifests of the signed commit (-got +want):\n%s", diff)
	}
}
