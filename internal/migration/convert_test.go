package migration

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

var testOptions = Options{
	Namespace:  "graphcd",
	ConfigMaps: map[string]string{ArgoSettingsConfigMap: "graphcd-cm"},
	Secrets:    map[string]string{ArgoSecret: "graphcd-secret"},
}

// convert converts src and returns the report of the object named from
// and graphcd's object named to.
func convert(t *testing.T, src *Source, from, to string) (Object, *unstructured.Unstructured) {
	t.Helper()
	if src.ConfigMaps == nil {
		src.ConfigMaps = map[string]*unstructured.Unstructured{}
	}
	objs, report, err := Convert(src, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	var r Object
	for _, o := range report.Objects {
		if o.From == from {
			r = o
		}
	}
	for _, o := range objs {
		if describe(o) == to {
			return r, o
		}
	}
	t.Fatalf("no %s among %d objects; report %+v", to, len(objs), report)
	return r, nil
}

func has(t *testing.T, what string, lines []string, want string) {
	t.Helper()
	if !slices.Contains(lines, want) {
		t.Errorf("%s lacks %q:\n%q", what, want, lines)
	}
}

// A spec field graphcd does not know is reported and left out; one that
// holds only a zero value is not reported. automated.enabled: false turns
// automated sync off, so automated goes.
func TestConvertApplicationSpec(t *testing.T) {
	app := object(t, `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://git.example.com/web.git, path: web, futureField: {a: 1}, emptyField: ""}
  destination: {server: https://kubernetes.default.svc, namespace: web}
  syncPolicy:
    automated: {enabled: false, prune: true}
`)
	r, obj := convert(t, &Source{Namespace: "argocd", Applications: []*unstructured.Unstructured{app}}, "Application argocd/web", "Application graphcd/web")
	has(t, "unsupported", r.Unsupported, "spec.source.futureField: a field graphcd does not know; left out")
	has(t, "changed", r.Changed, "spec.syncPolicy.automated with enabled: false left out: graphcd has no switch, so automated sync stays off by having none")
	if len(r.Unsupported) != 1 {
		t.Errorf("unsupported = %q, want only futureField", r.Unsupported)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "source", "futureField"); found {
		t.Error("futureField written")
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "syncPolicy", "automated"); found {
		t.Error("automated written although Argo CD had it disabled")
	}
	if obj.GetAPIVersion() != "graphcd.io/v1alpha1" {
		t.Errorf("apiVersion = %s", obj.GetAPIVersion())
	}
}

// An app of another namespace keeps it, and its tracking id has the
// namespace.
func TestConvertAppInAnyNamespace(t *testing.T) {
	app := object(t, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: team-a}\nspec: {project: default}\n")
	r, _ := convert(t, &Source{Namespace: "argocd", Applications: []*unstructured.Unstructured{app}}, "Application team-a/web", "Application team-a/web")
	has(t, "unchanged", r.Unchanged, "tracking id team-a_web: live resources keep their owner")
	has(t, "changed", r.Changed, "stays in namespace team-a: graphcd serves it only when --application-namespaces names it")
}

// Without a tracking method, an Argo CD 2 controller means label; the
// secret keys the SSO settings name are copied, Argo CD's tokens are not,
// and a reference to another Secret is reported.
func TestConvertSettings(t *testing.T) {
	cm := object(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  oidc.config: |
    clientSecret: $oidc.clientSecret
    extra: $sso-secret:token
`)
	sec := object(t, `apiVersion: v1
kind: Secret
metadata: {name: argocd-secret, namespace: argocd}
data: {oidc.clientSecret: czE=, admin.tokens: czI=, other: czM=}
`)
	src := &Source{
		Namespace:   "argocd",
		ConfigMaps:  map[string]*unstructured.Unstructured{ArgoSettingsConfigMap: cm},
		Secrets:     []*unstructured.Unstructured{sec},
		Controllers: []Workload{{Kind: "StatefulSet", Name: "argocd-application-controller", Replicas: 1, Image: "quay.io/argoproj/argocd:v2.13.1"}},
	}
	r, obj := convert(t, src, "ConfigMap argocd/argocd-cm", "ConfigMap graphcd/graphcd-cm")
	has(t, "changed", r.Changed, "application.resourceTrackingMethod unset, which Argo CD 2 reads as label: set to label, so graphcd tracks the same resources")
	if v, _, _ := unstructured.NestedString(obj.Object, "data", "application.resourceTrackingMethod"); v != "label" {
		t.Errorf("tracking method written = %q", v)
	}
	r, obj = convert(t, src, "Secret argocd/argocd-secret", "Secret graphcd/graphcd-secret")
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	if len(data) != 1 || data["oidc.clientSecret"] != "czE=" {
		t.Errorf("graphcd-secret data = %v, want only oidc.clientSecret", data)
	}
	has(t, "unsupported", r.Unsupported, "admin.tokens: not copied; tokens Argo CD issued do not verify in graphcd: issue new ones (createAccountToken)")
	has(t, "unsupported", r.Unsupported, "other: not copied; no graphcd setting refers to it")
	has(t, "unsupported", r.Unsupported, "$sso-secret:token: the SSO settings name Secret sso-secret; copy it into namespace graphcd")
	for _, l := range append(append(r.Unchanged, r.Changed...), r.Unsupported...) {
		for _, v := range []string{"czE=", "czI=", "czM="} {
			if strings.Contains(l, v) {
				t.Errorf("report line %q holds a secret value", l)
			}
		}
	}
}

// Credential keys graphcd does not read are reported; the Secret is
// copied as it is.
func TestConvertCredentials(t *testing.T) {
	sec := object(t, `apiVersion: v1
kind: Secret
metadata: {name: gh, namespace: argocd, labels: {argocd.argoproj.io/secret-type: repo-creds}}
data: {url: aHR0cHM6Ly9naXRodWIuY29t, githubAppPrivateKey: a2V5}
`)
	r, obj := convert(t, &Source{Namespace: "argocd", Secrets: []*unstructured.Unstructured{sec}}, "Secret argocd/gh", "Secret graphcd/gh")
	has(t, "unsupported", r.Unsupported, "githubAppPrivateKey: graphcd does not read GitHub App credentials")
	if obj.GetLabels()["argocd.argoproj.io/secret-type"] != "repo-creds" {
		t.Errorf("labels = %v", obj.GetLabels())
	}
}

// argocd-rbac-cm carries over as it is: its roles, project roles and
// default role are reported, and a line graphcd refuses is named.
func TestConvertRBAC(t *testing.T) {
	cm := object(t, `apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-rbac-cm, namespace: argocd}
data:
  policy.default: role:readonly
  policy.csv: |
    p, role:deployer, applications, sync, */*, allow
    g, ops, role:deployer
  policy.team.csv: |
    p, proj:team:ci, applications, get, team/*, allow
    p, role:broken
  policy.unknown: x
`)
	opts := testOptions
	opts.ConfigMaps = map[string]string{ArgoRBACConfigMap: "graphcd-rbac-cm"}
	objs, report, err := Convert(&Source{Namespace: "argocd", ConfigMaps: map[string]*unstructured.Unstructured{ArgoRBACConfigMap: cm}}, opts)
	if err != nil || len(objs) != 1 || len(report.Objects) != 1 {
		t.Fatalf("Convert = %d objects, %v", len(objs), err)
	}
	r := report.Objects[0]
	has(t, "unchanged", r.Unchanged, "roles proj:team:ci, role:broken, role:deployer: the same names, built-in role:readonly and role:admin included")
	has(t, "unchanged", r.Unchanged, "default role role:readonly")
	has(t, "unsupported", r.Unsupported, "policy.unknown: not an RBAC key graphcd reads")
	if len(r.Unsupported) != 2 || !strings.HasPrefix(r.Unsupported[1], "policy line refused by graphcd: ") {
		t.Errorf("unsupported = %q, want the unknown key and the broken line", r.Unsupported)
	}
	if data, _, _ := unstructured.NestedStringMap(objs[0].Object, "data"); data["policy.team.csv"] == "" || objs[0].GetName() != "graphcd-rbac-cm" {
		t.Errorf("graphcd-rbac-cm = %v", objs[0].Object)
	}
}
