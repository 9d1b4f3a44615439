package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{
		"listen":       "GRAPHCD_LISTEN",
		"install-crds": "GRAPHCD_INSTALL_CRDS",
		"log-level":    "GRAPHCD_LOG_LEVEL",
		"kube-qps":     "GRAPHCD_KUBE_QPS",
	} {
		if diff := cmp.Diff(EnvName(flag), want); diff != "" {
			t.Errorf("EnvName(%q) (-got +want):\n%s", flag, diff)
		}
	}
}
