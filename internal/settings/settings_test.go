package settings

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfigMapBothForms(t *testing.T) {
	b, err := os.ReadFile("testdata/argocd-cm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfigMap(b)
	if err != nil {
		t.Fatalf("ParseConfigMap: %v", err)
	}
	want := &Settings{
		Customizations: []Customization{
			{Kind: "PersistentVolumeClaim", HealthLua: "return {status = \"Healthy\"}\n"},
			{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration",
				IgnoreDifferences: &IgnoreDifferences{JQPathExpressions: []string{".webhooks[]?.clientConfig.caBundle"}}},
			{Group: "apps", Kind: "Deployment", IgnoreDifferences: &IgnoreDifferences{JSONPointers: []string{"/spec/replicas"}}},
			{Group: "argoproj.io", Kind: "*", HealthLua: "return {status = \"Progressing\"}\n", UseOpenLibs: true},
			{Group: "batch", Kind: "CronJob", Actions: &Actions{
				DiscoveryLua: "return {suspend = {}}\n",
				Definitions:  []ActionDefinition{{Name: "suspend", ActionLua: "obj.spec.suspend = true\nreturn obj\n"}},
			}},
			// The split key wins over the map form for the same kind.
			{Group: "cert-manager.io", Kind: "Certificate", HealthLua: "hs = {}\nhs.status = \"Healthy\"\nreturn hs\n", UseOpenLibs: true},
			{Group: "example.com", Kind: "Backup", Actions: &Actions{
				DiscoveryLua: "return {run = {}}", MergeBuiltinActions: true,
				Definitions: []ActionDefinition{{Name: "run", ActionLua: "return obj"}},
			}},
		},
		IgnoreDifferencesAll: &IgnoreDifferences{ManagedFieldsManagers: []string{"kube-controller-manager"}},
		Exclusions:           []ResourceFilter{{APIGroups: []string{"cilium.io"}, Kinds: []string{"CiliumIdentity"}, Clusters: []string{"*"}}},
		CompareOptions:       CompareOptions{IgnoreAggregatedRoles: true, IgnoreResourceStatusField: "all"},
		InstanceLabelKey:     "argocd.argoproj.io/instance",
		TrackingMethod:       "annotation+label",
		ServerSideDiff:       true,
		SyncImpersonation:    true,
		// A comma-separated list, as in Argo CD; blanks are skipped.
		HelmValuesFileSchemes: []string{"https", "s3", "http"},
		KustomizeBuildOptions: "--enable-helm --load-restrictor LoadRestrictionsNone",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("settings (-got +want):\n%s", diff)
	}
}

func TestParseDefaults(t *testing.T) {
	got, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &Settings{InstanceLabelKey: DefaultInstanceLabelKey, TrackingMethod: DefaultTrackingMethod}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("defaults (-got +want):\n%s", diff)
	}
}

// Errors name the key and the line in the file, including lines inside a
// block value.
func TestParseConfigMapErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string
	}{
		{
			name: "bad yaml inside a block value",
			file: "kind: ConfigMap\ndata:\n  resource.exclusions: |\n    - apiGroups: [a]\n      kinds: b: c\n",
			want: `settings key "resource.exclusions" (line 5)`,
		},
		{
			name: "unknown field in a closed format",
			file: "kind: ConfigMap\ndata:\n  x: y\n  resource.customizations.ignoreDifferences.apps_Deployment: |\n    jsonPointer:\n    - /spec/replicas\n",
			want: `settings key "resource.customizations.ignoreDifferences.apps_Deployment" (line 5): field jsonPointer not found`,
		},
		{
			name: "bad boolean",
			file: "kind: ConfigMap\ndata:\n  resource.customizations.useOpenLibs.apps_Deployment: \"yes please\"\n",
			want: `settings key "resource.customizations.useOpenLibs.apps_Deployment" (line 3): want true or false`,
		},
		{
			name: "bad tracking method",
			file: "kind: ConfigMap\ndata:\n  application.resourceTrackingMethod: labels\n",
			want: `(line 3): want annotation, annotation+label or label, got "labels"`,
		},
		{
			name: "bad server-side diff switch",
			file: "kind: ConfigMap\ndata:\n  controller.diff.server.side: sometimes\n",
			want: `settings key "controller.diff.server.side" (line 3): want true or false, got "sometimes"`,
		},
		{
			name: "bad impersonation switch",
			file: "kind: ConfigMap\ndata:\n  application.sync.impersonation.enabled: on\n",
			want: `settings key "application.sync.impersonation.enabled" (line 3): want true or false, got "on"`,
		},
		{
			name: "unknown field in actions",
			file: "kind: ConfigMap\ndata:\n  resource.customizations.actions.apps_Deployment: |\n    discovery.lua: return {}\n    definition: []\n",
			want: `settings key "resource.customizations.actions.apps_Deployment" (line 5): field definition not found`,
		},
		{
			name: "action defined twice",
			file: "kind: ConfigMap\ndata:\n  resource.customizations.actions.apps_Deployment: |\n    discovery.lua: return {}\n    definitions:\n    - {name: a, action.lua: return obj}\n    - {name: a, action.lua: return obj}\n",
			want: `settings key "resource.customizations.actions.apps_Deployment" (line 4): definitions[1]: action "a" is defined twice`,
		},
		{
			name: "actions without discovery",
			file: "kind: ConfigMap\ndata:\n  resource.customizations: |\n    apps/Deployment:\n      actions: |\n        definitions: []\n",
			want: `settings key "resource.customizations" (line 4): apps/Deployment actions: discovery.lua is empty`,
		},
		{name: "not a configmap", file: "kind: Secret\n", want: `kind is "Secret", want ConfigMap`},
		{name: "not an object", file: "- a\n- b\n", want: "line 1: want a ConfigMap object"},
		{name: "data not a map", file: "kind: ConfigMap\ndata: [1]\n", want: "line 2: data must be a map of strings"},
		{name: "empty", file: "", want: "settings file is empty"},
		{name: "bad map key", file: "kind: ConfigMap\ndata:\n  resource.customizations: |\n    a/b/:\n      health.lua: x\n", want: `is not a valid group/Kind`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfigMap([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestErrorIsTyped(t *testing.T) {
	_, err := Parse(map[string]string{"resource.compareoptions": "ignoreResourceStatusField: some"})
	var se *Error
	if !errors.As(err, &se) || se.Key != "resource.compareoptions" {
		t.Fatalf("error = %v, want *Error for resource.compareoptions", err)
	}
}

func FuzzParseConfigMap(f *testing.F) {
	if b, err := os.ReadFile("testdata/argocd-cm.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("kind: ConfigMap\ndata:\n  resource.customizations: '{'\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseConfigMap(b) // must not panic
	})
}
