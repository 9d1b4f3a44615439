package admin

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// admin sync-plan reads a directory (only manifest files, hidden
// directories skipped) and prints the sync-waves app in execution order,
// SyncFail hooks last and PreDelete hooks left out.
func TestAdminSyncPlanTable(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "sync-plan", "-f", "testdata/sync-plan/app", "--namespace", "shop")
	if code != command.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := []string{
		"PHASE      WAVE   KIND              NAMESPACE   NAME               HOOK       DELETE-POLICY",
		"PreSync    0      Job.batch         shop        schema-upgrade-*   PreSync    HookSucceeded",
		"Sync       0      Service           shop        backend",
		"Sync       0      Deployment.apps   shop        backend",
		"Sync       1      Job.batch         shop        maintenance-on-*   Sync       BeforeHookCreation",
		"Sync       2      Deployment.apps   shop        frontend",
		"Sync       3      Job.batch         shop        maintenance-off    Sync       BeforeHookCreation,HookSucceeded",
		"SyncFail   0      Pod               shop        page-oncall        SyncFail   HookSucceeded",
	}
	var got []string
	for line := range strings.SplitSeq(strings.TrimSuffix(stdout, "\n"), "\n") {
		got = append(got, strings.TrimRight(line, " "))
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("table (-got +want):\n%s", d)
	}
}

// -o json is one array of tasks in execution order with stable field
// names; several -f add up; a CRD moves before its custom resource; the
// CreateNamespace task comes first.
func TestAdminSyncPlanJSON(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "sync-plan", "-o", "json", "--namespace", "shop",
		"--sync-option", "CreateNamespace=true", "--sync-option", "Replace=true",
		"-f", "testdata/sync-plan/crd.yaml", "-f", "testdata/sync-plan/app/hooks.yml")
	if code != command.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("output is not one JSON array: %v\n%s", err, stdout)
	}
	task := func(phase string, wave float64, group, kind, namespace, name, hook string, policies ...any) map[string]any {
		if policies == nil {
			policies = []any{}
		}
		return map[string]any{
			"phase": phase, "wave": wave, "group": group, "version": "v1", "kind": kind,
			"namespace": namespace, "name": name, "hookType": hook, "deletePolicies": policies, "prune": false,
		}
	}
	ns := task("PreSync", 0, "", "Namespace", "", "shop", "")
	ns["createsNamespace"] = true
	schema := task("PreSync", 0, "batch", "Job", "shop", "", "PreSync", "HookSucceeded")
	schema["generateName"] = "schema-upgrade-"
	on := task("Sync", 1, "batch", "Job", "shop", "", "Sync", "BeforeHookCreation")
	on["generateName"] = "maintenance-on-"
	want := []map[string]any{
		ns,
		schema,
		task("Sync", 0, "apiextensions.k8s.io", "CustomResourceDefinition", "", "coupons.shop.example.com", ""),
		task("Sync", 0, "shop.example.com", "Coupon", "shop", "welcome", ""),
		on,
		task("Sync", 3, "batch", "Job", "shop", "maintenance-off", "Sync", "BeforeHookCreation", "HookSucceeded"),
		task("SyncFail", 0, "", "Pod", "shop", "page-oncall", "SyncFail", "HookSucceeded"),
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("JSON (-got +want):\n%s", d)
	}
}

// A resource's own sync options show in JSON as what its annotation
// changed from the application's options.
func TestAdminSyncPlanJSONSyncOptions(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: big
  annotations: {argocd.argoproj.io/sync-options: "ServerSideApply=false,Replace=true"}
`
	withStdin(t, in)
	code, stdout, stderr := runCLI(t, nil, "admin", "sync-plan", "-f", "-", "-o", "json", "--sync-option", "ServerSideApply=true")
	if code != command.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var got []struct {
		Name        string   `json:"name"`
		SyncOptions []string `json:"syncOptions"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "big" || !cmp.Equal(got[0].SyncOptions, []string{"Replace=true", "ServerSideApply=false"}) {
		t.Errorf("got %+v", got)
	}
}

// Bad manifests: one line per problem on stderr, no plan, exit 1.
func TestAdminSyncPlanBadManifests(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "sync-plan", "-f", "testdata/sync-plan/bad.yaml", "-o", "json")
	if code != command.ExitError || stdout != "" {
		t.Errorf("exit %d, stdout %q; want 1 and no plan", code, stdout)
	}
	want := []string{
		"graphcd: testdata/sync-plan/bad.yaml document 4: document 1 (line 1): not an object",
		`graphcd: Job shop/migrate: annotation argocd.argoproj.io/hook: unknown hook type "PreSnyc" (known: PreSync, Sync, PostSync, SyncFail, Skip, PreDelete, PostDelete)`,
		`graphcd: Deployment shop/web: annotation argocd.argoproj.io/sync-wave: "first" is not an integer`,
		"graphcd: ConfigMap shop/settings: annotation argocd.argoproj.io/sync-options: sync option PruneLast=yes: want true or false",
		"graphcd: 4 problem(s) in the manifests, no plan",
	}
	if d := cmp.Diff(strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"), want); d != "" {
		t.Errorf("stderr (-got +want):\n%s", d)
	}
}

func TestAdminSyncPlanUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string // first line of stderr
	}{
		{[]string{}, "graphcd: flag -f/--file is required"},
		{[]string{"-f", "testdata/sync-plan/missing.yaml"}, "graphcd: read testdata/sync-plan/missing.yaml: no such file or directory"},
		{[]string{"-f", "testdata/sync-plan/crd.yaml", "-o", "yaml"}, `graphcd: invalid argument "yaml" for "-o, --output" flag: must be one of text, json`},
		{[]string{"-f", "testdata/sync-plan/crd.yaml", "--sync-option", "PruneLast"}, `graphcd: --sync-option: sync option "PruneLast": want Name=value`},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, nil, append([]string{"admin", "sync-plan"}, tt.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != command.ExitUsage || first != tt.want {
			t.Errorf("sync-plan %q: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// withStdin makes os.Stdin read data for the rest of the test.
func withStdin(t *testing.T, data string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = f
	t.Cleanup(func() { os.Stdin = old; _ = f.Close() })
}

// --namespace skips custom resources whose CRD, among the manifests,
// declares them cluster-scoped, as it skips built-in cluster-scoped kinds.
func TestAdminSyncPlanClusterScopedCustomResource(t *testing.T) {
	in := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clusterissuers.certs.example.com}
spec:
  group: certs.example.com
  names: {kind: ClusterIssuer, plural: clusterissuers}
  scope: Cluster
---
apiVersion: certs.example.com/v1
kind: ClusterIssuer
metadata: {name: letsencrypt}
---
apiVersion: certs.example.com/v1
kind: Issuer
metadata: {name: local}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
`
	withStdin(t, in)
	code, stdout, stderr := runCLI(t, nil, "admin", "sync-plan", "-f", "-", "-o", "json", "--namespace", "shop")
	if code != command.ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var tasks []struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
	}
	if err := json.Unmarshal([]byte(stdout), &tasks); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, task := range tasks {
		got[task.Kind] = task.Namespace
	}
	want := map[string]string{"CustomResourceDefinition": "", "ClusterIssuer": "", "Issuer": "shop", "ClusterRole": ""}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("namespaces by kind (-got +want):\n%s", d)
	}
}
