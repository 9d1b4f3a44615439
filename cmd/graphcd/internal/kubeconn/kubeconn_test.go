package kubeconn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSafeHost(t *testing.T) {
	tests := map[string]string{
		"https://127.0.0.1:6443":                "https://127.0.0.1:6443",
		"https://admin:hunter2@example.com/k8s": "https://example.com/k8s",
		"https://example.com?token=abc":         "https://example.com",
		"::not a url":                           "(invalid server URL)",
	}
	for in, want := range tests {
		if diff := cmp.Diff(safeHost(in), want); diff != "" {
			t.Errorf("safeHost(%q) (-got +want):\n%s", in, diff)
		}
	}
}
