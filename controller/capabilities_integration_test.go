//go:build integration

package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// A chart sees the destination cluster as Argo CD shows it to Helm: its
// version and API versions in .Capabilities, and KUBE_VERSION and
// KUBE_API_VERSIONS in the build environment of its parameters.
func TestRenderSeesTheDestinationCluster(t *testing.T) {
	t.Parallel()
	const name = "capabilities"
	files := map[string]string{
		"app/Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
		"app/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  deployments: {{ .Capabilities.APIVersions.Has "apps/v1/Deployment" | quote }}
  applications: {{ .Capabilities.APIVersions.Has "graphcd.io/v1alpha1" | quote }}
  nothing: {{ .Capabilities.APIVersions.Has "example.com/v9" | quote }}
  fromEnv: {{ .Values.kube | quote }}
  apisListed: {{ .Values.apis | quote }}
`,
	}
	_, dest, _ := newAppWith(t, name, files, func(a *v1alpha1.Application) {
		a.Spec.Source.Helm = &v1alpha1.ApplicationSourceHelm{Parameters: []v1alpha1.HelmParameter{
			{Name: "kube", Value: "$KUBE_VERSION"},
			{Name: "apis", Value: "${KUBE_API_VERSIONS}", ForceString: true},
		}}
		op := manual(v1alpha1.SyncOperation{})
		a.Operation = &op
	})
	waitStatus(t, name, "synced", opDone(v1alpha1.OperationSucceeded))
	cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := cluster.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kube": v.GitVersion, "deployments": "true", "applications": "true", "nothing": "false", "fromEnv": strings.TrimPrefix(v.GitVersion, "v")}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, cm.Data[k], v)
		}
	}
	if apis := cm.Data["apisListed"]; !strings.Contains(apis, "apps/v1,") || !strings.Contains(apis, "v1/ConfigMap") {
		t.Errorf("KUBE_API_VERSIONS = %.200q, want the cluster's group versions and kinds", apis)
	}
}
