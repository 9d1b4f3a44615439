//go:build integration

package controller_test

import (
	"archive/tar"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/reposerver/oci"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// An app whose source is a path in an OCI artifact syncs from a private
// registry with its repository Secret's credentials, and reports the
// artifact's manifest digest as its revision (the app names the tag
// "main", as the shared helper writes apps).
func TestOCIArtifactAppSyncs(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	reg := reposervertest.ServeRegistry(t, "oci-bot", "oci-pw-3", nil)
	digest := reg.PushArtifact(t, "team/web", []reposervertest.Layer{{MediaType: oci.MediaTypeLayer, Data: reposervertest.TarGz(t,
		reposervertest.TarEntry{Name: "app/", Type: tar.TypeDir},
		reposervertest.TarEntry{Name: "app/cm.yaml", Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\ndata:\n  a: b\n"},
	)}}, "1.0.0", "main")
	url := "oci://" + reg.Host + "/team/web"
	createProjects(t, ns, false, "team-a")
	createSecret(t, ns, "oci-repo", secretcodec.TypeRepository, map[string]string{
		"url": url, "type": "oci", "username": "oci-bot", "password": "oci-pw-3", "insecure": "true",
	})
	startScopedController(t, ns)
	projectApp(t, ns, "oci-app", "team-a", url, v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest}, true)
	app := finished(t, ns, "oci-app")
	if app.Status.OperationState.Phase != v1alpha1.OperationSucceeded {
		t.Fatalf("the OCI app's sync did not succeed:\n%s", dump(app))
	}
	if !exists(t, dest, "ConfigMap", "from-oci") {
		t.Error("the artifact's ConfigMap was not applied")
	}
	if rev := app.Status.OperationState.SyncResult.Revision; rev != digest || !strings.HasPrefix(rev, "sha256:") {
		t.Errorf("synced revision %q, want the manifest digest %s", rev, digest)
	}
}
