package admin

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command/commandtest"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
)

func TestMain(m *testing.M) {
	// admin render, run in process, starts its render workers from this
	// test binary.
	renderworker.ExitIfWorker()
	os.Exit(m.Run())
}

// runCLI runs graphcd admin in process with args and the given
// environment.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var kubeconfig string
	admin := func() []*cobra.Command { return []*cobra.Command{NewCommand(&kubeconfig)} }
	return commandtest.Run(t, commandtest.Root(admin), env, args...)
}

// admin health judges each document, applies the Lua customization from
// an argocd-cm, reports unreadable documents in place and exits 2 for them.
func TestAdminHealth(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "health", "-f", "testdata/health-objects.yaml", "--settings", "testdata/health-settings.yaml")
	if code != command.ExitUsage || !strings.Contains(stderr, "could not be read") {
		t.Errorf("exit %d, stderr %q; want 2 for the unreadable document", code, stderr)
	}
	var got []healthLine
	for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		var l healthLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		if l.Error != "" {
			l.Error = "error"
		}
		got = append(got, l)
	}
	want := []healthLine{
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "demo", Name: "web", Status: "Healthy"},
		{APIVersion: "cert-manager.io/v1", Kind: "Certificate", Namespace: "demo", Name: "web-tls", Status: "Progressing", Message: "Issuing certificate as Secret does not exist"},
		{Error: "error"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "demo", Name: "settings", Message: "no health check for this kind"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("results (-got +want):\n%s", diff)
	}
}

// admin health agrees with Argo CD on the classes of issue 20; each class
// has its own file of objects (and settings where a Lua check is needed).
func TestAdminHealthArgoCDCompat(t *testing.T) {
	tests := []struct {
		name, file, settings string
		want                 []healthLine
	}{
		{
			name: "load balancer entries without an address",
			file: "testdata/health-loadbalancer.yaml",
			want: []healthLine{
				{APIVersion: "v1", Kind: "Service", Namespace: "demo", Name: "api", Status: "Healthy"},
				{APIVersion: "v1", Kind: "Service", Namespace: "demo", Name: "metrics", Status: "Healthy"},
				{APIVersion: "v1", Kind: "Service", Namespace: "demo", Name: "queued", Status: "Progressing", Message: "Waiting for the load balancer to get an address"},
				{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "demo", Name: "shop", Status: "Healthy"},
				{APIVersion: "extensions/v1beta1", Kind: "Ingress", Namespace: "demo", Name: "legacy", Status: "Healthy"},
				{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "demo", Name: "unassigned", Status: "Progressing", Message: "Waiting for the ingress controller to publish an address"},
			},
		},
		{
			name: "HorizontalPodAutoscaler conditions",
			file: "testdata/health-hpa.yaml",
			want: []healthLine{
				{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "odd-reason", Status: "Progressing", Message: "Waiting to autoscale"},
				{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "custom-metric", Status: "Degraded", Message: "FailedGetObjectMetric: unable to get metric rps"},
				{APIVersion: "autoscaling/v1", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "garbled", Status: "Unknown", Message: "cannot read the autoscaling.alpha.kubernetes.io/conditions annotation: want a JSON list of conditions, found object"},
				{APIVersion: "autoscaling/v2beta1", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "idle", Status: "Healthy", Message: "SucceededGetScale"},
				{APIVersion: "autoscaling/v2beta2", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "pods-metric", Status: "Degraded", Message: "FailedGetPodsMetric: unable to get metric qps"},
				{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "in-range", Status: "Progressing", Message: "Waiting to autoscale"},
				{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Namespace: "demo", Name: "limited", Status: "Healthy", Message: "TooFewReplicas: the desired replica count is less than the minimum replica count"},
			},
		},
		{
			name: "Pod ignore-restart-policy annotation",
			file: "testdata/health-pod-restart-policy.yaml",
			want: []healthLine{
				{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "vm-ready", Status: "Healthy"},
				{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "vm-backoff", Status: "Degraded", Message: "back-off 1m20s restarting failed container=compute"},
				{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "plain-never", Status: "Progressing"},
				{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "hook", Status: "Progressing"},
				{APIVersion: "v1", Kind: "Pod", Namespace: "demo", Name: "always-crashloop", Status: "Degraded", Message: "back-off 5m0s restarting failed container=web"},
			},
		},
		{
			name:     "Lua checks in Argo CD's environment",
			file:     "testdata/health-lua-objects.yaml",
			settings: "testdata/health-lua-settings.yaml",
			want: []healthLine{
				{APIVersion: "example.com/v1", Kind: "Database", Namespace: "demo", Name: "orders", Status: "Healthy", Message: "2 conditions: Provisioned, Ready"},
				{APIVersion: "example.com/v1", Kind: "Backup", Namespace: "demo", Name: "nightly", Status: "Healthy", Message: "Backup of 2026-03-01 took 42 min"},
				{APIVersion: "example.com/v1", Kind: "Backup", Namespace: "demo", Name: "weekly", Status: "Degraded", Message: "Backup of 2026-03-01 took 135 min"},
				{APIVersion: "example.com/v1", Kind: "Scaler", Namespace: "demo", Name: "web", Status: "Healthy", Message: `{"checked":2}`},
				{APIVersion: "example.com/v1", Kind: "Scaler", Namespace: "demo", Name: "queue", Status: "Degraded", Message: "ScalingActive is False"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"admin", "health", "-f", tt.file}
			if tt.settings != "" {
				args = append(args, "--settings", tt.settings)
			}
			if diff := cmp.Diff(adminHealthLines(t, args...), tt.want); diff != "" {
				t.Errorf("results (-got +want):\n%s", diff)
			}
		})
	}
}

// adminHealthLines runs admin health, which must succeed, and decodes its
// JSON lines.
func adminHealthLines(t *testing.T, args ...string) []healthLine {
	t.Helper()
	code, stdout, stderr := runCLI(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var lines []healthLine
	for line := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		var l healthLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q is not JSON: %v", line, err)
		}
		lines = append(lines, l)
	}
	return lines
}

func TestAdminHealthBadSettings(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "admin", "health", "-f", "testdata/health-objects.yaml", "--settings", "testdata/health-objects.yaml")
	if code != command.ExitError || !strings.Contains(stderr, `kind is "Deployment", want ConfigMap`) {
		t.Errorf("exit %d, stderr %q; want 1 naming the bad settings file", code, stderr)
	}
}

// admin diff exits 1 with a masked diff when a Secret changed, 0 when
// equal (server-set metadata ignored), 2 on error; no secret byte leaks.
func TestAdminDiff(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "admin", "diff", "--desired", "testdata/diff-desired.yaml", "--live", "testdata/diff-live.yaml")
	if code != 1 {
		t.Errorf("changed Secret: exit %d, want 1", code)
	}
	if !strings.Contains(stdout, "===== demo/Secret/db") || strings.Contains(stdout, "ConfigMap") {
		t.Errorf("diff should name only the Secret:\n%s", stdout)
	}
	for _, secret := range []string{"n3w-passw0rd", "old-passw0rd", "b2xkLXBhc3N3MHJk", "admin", "YWRtaW4="} {
		if strings.Contains(stdout, secret) {
			t.Errorf("diff output leaks %q:\n%s", secret, stdout)
		}
	}
	if code, stdout, _ := runCLI(t, nil, "admin", "diff", "--desired", "testdata/diff-live.yaml", "--live", "testdata/diff-live.yaml"); code != 0 || stdout != "" {
		t.Errorf("equal files: exit %d, output %q; want 0 and nothing", code, stdout)
	}
	if code, _, stderr := runCLI(t, nil, "admin", "diff", "--desired", "testdata/missing.yaml", "--live", "testdata/diff-live.yaml"); code != 2 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, stderr %q; want 2 naming the file", code, stderr)
	}
}

// admin diff reads an empty list or map in Git as equal to a null or
// absent live field: exit 0 and no output.
func TestAdminDiffEmptyEqualsNull(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "diff", "--desired", "testdata/diff/empty-desired.yaml", "--live", "testdata/diff/empty-live.yaml")
	if code != command.ExitOK || stdout != "" {
		t.Errorf("exit %d, output %q, stderr %q; want 0 and nothing", code, stdout, stderr)
	}
}

// admin diff reads a Secret value "" in Git as equal to a null live one,
// and a modified Secret shows the key that differs, masked.
func TestAdminDiffSecretEmptyValues(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "admin", "diff", "--desired", "testdata/diff/secret-desired.yaml", "--live", "testdata/diff/secret-live.yaml")
	if code != command.ExitError {
		t.Errorf("exit %d, want 1 for the new key", code)
	}
	var changed []string
	for line := range strings.SplitSeq(stdout, "\n") {
		if (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-")) && !strings.HasPrefix(line, "+++ ") && !strings.HasPrefix(line, "--- ") {
			changed = append(changed, line)
		}
	}
	if want := []string{`+  api-key: "++++++++"`}; !cmp.Equal(changed, want) {
		t.Errorf("changed lines %q, want %q:\n%s", changed, want, stdout)
	}
	if strings.Contains(stdout, "feature-flags") || strings.Contains(stdout, "YWRtaW4=") {
		t.Errorf("diff should name only the credentials, masked:\n%s", stdout)
	}
}

// admin diff compares a desired object without a namespace in the
// destination namespace (--namespace, else --app's), and never gives one
// to a cluster-scoped kind: built-in, declared by a CRD, or seen without
// one among the live objects.
func TestAdminDiffDestinationNamespace(t *testing.T) {
	files := []string{"admin", "diff", "--desired", "testdata/diff/ns-desired.yaml", "--live", "testdata/diff/ns-live.yaml"}
	code, stdout, _ := runCLI(t, nil, files...)
	if code != command.ExitError || !strings.Contains(stdout, "===== apps/Deployment/web (missing from the cluster)") ||
		!strings.Contains(stdout, "===== shop/apps/Deployment/web (not in Git)") {
		t.Errorf("without a destination namespace: exit %d; want 1 and the Deployment unpaired:\n%s", code, stdout)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{name: "--namespace", args: []string{"--namespace", "shop"}},
		{name: "--app", args: []string{"--app", "testdata/diff/app.yaml"}},
		{name: "--namespace wins over --app", args: []string{"--app", "testdata/diff/app.yaml", "--namespace", "shop"}},
	} {
		code, stdout, stderr := runCLI(t, nil, append(files, tc.args...)...)
		if code != command.ExitOK || stdout != "" {
			t.Errorf("%s: exit %d, output %q, stderr %q; want 0 and nothing", tc.name, code, stdout, stderr)
		}
	}
	code, stdout, _ = runCLI(t, nil, append(files, "--namespace", "edge")...)
	if code != command.ExitError || !strings.Contains(stdout, "===== edge/apps/Deployment/web (missing from the cluster)") ||
		strings.Contains(stdout, "ClusterRole") || strings.Contains(stdout, "ClusterIssuer") || strings.Contains(stdout, "Tenant") {
		t.Errorf("--namespace edge: exit %d; want 1 with only the Deployment unpaired:\n%s", code, stdout)
	}
}

// With --app, desired objects carry the app's tracking as the controller
// writes it, so what the controller applied is not a difference; without,
// the three-way diff sees the tracking id removed since the last apply.
func TestAdminDiffTracking(t *testing.T) {
	files := []string{"admin", "diff", "--desired", "testdata/diff/tracked-desired.yaml", "--live", "testdata/diff/tracked-live.yaml"}
	code, stdout, _ := runCLI(t, nil, append(files, "--namespace", "shop")...)
	if code != command.ExitError || !strings.Contains(stdout, `-    argocd.argoproj.io/tracking-id: "web:/ConfigMap:shop/settings"`) {
		t.Errorf("without --app: exit %d; want 1 and the tracking id removed:\n%s", code, stdout)
	}
	if code, stdout, stderr := runCLI(t, nil, append(files, "--app", "testdata/diff/app.yaml")...); code != command.ExitOK || stdout != "" {
		t.Errorf("--app: exit %d, output %q, stderr %q; want 0 and nothing", code, stdout, stderr)
	}
	code, stdout, _ = runCLI(t, nil, append(files, "--app", "testdata/diff/app.yaml", "--settings", "testdata/diff/label-tracking-cm.yaml")...)
	if code != command.ExitError || !strings.Contains(stdout, "+    app.kubernetes.io/instance: web") || !strings.Contains(stdout, "-    argocd.argoproj.io/tracking-id") {
		t.Errorf("--app with label tracking: exit %d; want 1, the label added and the id removed:\n%s", code, stdout)
	}
}

func TestAdminRenderFlags(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "admin", "render", "--repo", ".", "--helm-set", "novalue")
	if code != command.ExitUsage || !strings.Contains(stderr, `parameter "novalue": want name=value`) {
		t.Errorf("exit %d, stderr %q; want a usage error", code, stderr)
	}
}
