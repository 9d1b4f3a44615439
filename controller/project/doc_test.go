package project

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// TestPackageDocExample keeps the AppProject in the package documentation
// valid and meaning what the documentation says.
func TestPackageDocExample(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var doc []string
	in := false
	for line := range strings.Lines(string(src)) {
		code, isCode := strings.CutPrefix(line, "//\t")
		if !isCode {
			in = false
		} else if strings.HasPrefix(code, "apiVersion:") {
			in = true
		}
		if in {
			doc = append(doc, code)
		}
	}
	if len(doc) == 0 {
		t.Fatal("no AppProject example in doc.go")
	}
	var p v1alpha1.AppProject
	if err := yaml.UnmarshalStrict([]byte(strings.Join(doc, "")), &p); err != nil {
		t.Fatalf("example does not decode: %v\n%s", err, strings.Join(doc, ""))
	}
	r, err := Compile(&p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  error
		want string
	}{
		{r.SourceAllowed("https://github.com/example/shop.git"), ""},
		{r.SourceAllowed("https://github.com/example/legacy-billing"), "~denied by sourceRepos entry"},
		{r.SourceAllowed("https://github.com/example/a/b"), "~is not permitted"},
		{r.SourceAllowed("https://gitlab.example.com/team-a/x/y"), ""},
		{r.DestinationAllowed("https://kubernetes.default.svc", "in-cluster", "team-a-web"), ""},
		{r.DestinationAllowed("https://kubernetes.default.svc", "in-cluster", "kube-system"), "~denied by destination"},
		{r.DestinationAllowed("https://10.0.0.1", "prod-eu", "team-a"), ""},
		{r.ClusterResourceAllowed("", "Namespace"), ""},
		{r.ClusterResourceAllowed("rbac.authorization.k8s.io", "ClusterRole"),
			"resource rbac.authorization.k8s.io:ClusterRole is not permitted in project team-a (not in clusterResourceWhitelist)"},
		{r.NamespaceResourceAllowed("", "ResourceQuota"), "~in namespaceResourceBlacklist"},
		{r.AppNamespaceAllowed("team-a-ci-7", "graphcd"), ""},
		{r.SyncAllowed(WindowTarget{AppName: "web", Server: "https://10.0.0.1", ClusterName: "prod-eu", Namespace: "team-a"},
			mustTime(t, "2026-12-24T12:00:00+01:00"), false), "~deny window 1"},
		{r.SyncAllowed(WindowTarget{AppName: "web", Server: "https://10.0.0.1", ClusterName: "prod-eu", Namespace: "team-a"},
			mustTime(t, "2026-12-24T12:00:00+01:00"), true), ""},
	} {
		checkDecision(t, c.got, c.want)
	}
	if !r.OrphanedIgnored("", "ConfigMap", "istio-ca-root-cert") || !r.SignatureKeyAllowed("4aee18f83afdeb23") {
		t.Error("orphanedResources or signatureKeys of the example do not apply")
	}
}
