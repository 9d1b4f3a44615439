package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// admin appset generate prints the Applications of Argo CD's list
// example; an element whose template fails is named on stderr with its
// parameters, exit 2, and the others still print; a generator graphcd
// does not run yet and a file that is no ApplicationSet are usage errors.
func TestAdminAppSetGenerate(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "appset", "generate", "-f", "testdata/appset/guestbook.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var apps []v1alpha1.Application
	if err := json.Unmarshal([]byte(stdout), &apps); err != nil || len(apps) != 2 {
		t.Fatalf("stdout %q (%v), want two Applications", stdout, err)
	}
	if a := apps[1]; a.Name != "engineering-prod-guestbook" || a.Namespace != "graphcd" || a.Spec.Destination.Server != "https://2.4.6.8" ||
		a.Spec.Source.Path != "applicationset/examples/list-generator/guestbook/engineering-prod" || a.APIVersion != v1alpha1.GroupVersion.String() {
		t.Errorf("second Application: %+v", a)
	}

	code, stdout, stderr = runCLI(t, nil, "admin", "appset", "generate", "-f", "testdata/appset/missing-key.yaml")
	if code != command.ExitUsage || !strings.Contains(stdout, "name: engineering-dev-guestbook") || strings.Contains(stdout, "engineering-prod") ||
		!strings.Contains(stderr, `element 1 of generator 0 {"cluster":"engineering-prod"}: template: spec: destination: server:`) ||
		!strings.Contains(stderr, `map has no entry for key "url"`) {
		t.Errorf("an element without url: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	code, _, stderr = runCLI(t, nil, "admin", "appset", "generate", "-f", "testdata/health-objects.yaml")
	if code != command.ExitUsage || !strings.Contains(stderr, "not an ApplicationSet") {
		t.Errorf("not an ApplicationSet: exit %d, stderr %q", code, stderr)
	}
}

// --clusters gives the clusters generator the cluster Secrets of a file;
// the cluster graphcd runs in is always there, and only matching
// clusters generate.
func TestAdminAppSetGenerateClusters(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "appset", "generate", "-f", "testdata/appset/addons.yaml", "--clusters", "testdata/appset/clusters.yaml", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var apps []v1alpha1.Application
	if err := json.Unmarshal([]byte(stdout), &apps); err != nil || len(apps) != 1 {
		t.Fatalf("stdout %q (%v), want one Application", stdout, err)
	}
	if a := apps[0]; a.Name != "addons-prod-eu" || a.Spec.Destination.Server != "https://prod.example.com" || a.Spec.Source.Path != "envs/prod" {
		t.Errorf("generated %+v", a)
	}
	if strings.Contains(stdout, "not-a-real-token") {
		t.Error("the output carries a cluster's credentials")
	}
}
