package project

import (
	"testing"
	"time"
)

func TestDefaultProjectAllowsEverything(t *testing.T) {
	p := DefaultProject()
	if p.Name != DefaultProjectName || p.Kind != "AppProject" || p.APIVersion != "graphcd.io/v1alpha1" {
		t.Fatalf("DefaultProject = %s %s/%s", p.APIVersion, p.Kind, p.Name)
	}
	if err := Validate(&p.Spec); err != nil {
		t.Fatal(err)
	}
	r, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		r.SourceAllowed("https://github.com/org/repo.git"),
		r.SourceAllowed("git@gitlab.com:a/b/c"),
		r.DestinationAllowed("https://kubernetes.default.svc", "", "kube-system"),
		r.DestinationAllowed("https://prod.example.com:6443", "prod", ""),
		r.ClusterResourceAllowed("rbac.authorization.k8s.io", "ClusterRole"),
		r.ClusterResourceAllowed("", "Namespace"),
		r.NamespaceResourceAllowed("apps", "Deployment"),
		r.SyncAllowed(WindowTarget{AppName: "guestbook"}, time.Now(), false),
	} {
		if err != nil {
			t.Error(err)
		}
	}
	// Applications outside graphcd's namespace need sourceNamespaces, as in
	// Argo CD's default project.
	if err := r.AppNamespaceAllowed("team-b", "graphcd"); err == nil {
		t.Error("default project allows applications in any namespace")
	}
	if r.SignatureRequired() || r.OrphanedResourcesMonitored() || r.HasSyncWindows() {
		t.Error("default project requires signatures, monitors orphans or has windows")
	}
}
