package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// admin health judges each document, applies the Lua customization from
// an argocd-cm, reports unreadable documents in place and exits 2 for them.
func TestAdminHealth(t *testing.T) {
	code, stdout, stderr := runCLI(t, nil, "admin", "health", "-f", "testdata/health-objects.yaml", "--settings", "testdata/health-settings.yaml")
	if code != exitUsage || !strings.Contains(stderr, "could not be read") {
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
	if code != exitError || !strings.Contains(stderr, `kind is "Deployment", want ConfigMap`) {
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

func TestAdminRenderFlags(t *testing.T) {
	code, _, stderr := runCLI(t, nil, "admin", "render", "--repo", ".", "--helm-set", "novalue")
	if code != exitUsage || !strings.Contains(stderr, `parameter "novalue": want name=value`) {
		t.Errorf("exit %d, stderr %q; want a usage error", code, stderr)
	}
}
