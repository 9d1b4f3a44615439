package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/internal/testenv/install"
)

// chartDir is graphcd's Helm chart. Its default render must be
// deploy/install and its ha.enabled render deploy/ha, but for what only
// Helm adds.
const chartDir = "chart/graphcd"

// The release the comparisons render: with these, the chart's names and
// namespaces are the kustomizations'.
const (
	releaseName      = "graphcd"
	releaseNamespace = "graphcd"
)

// helmLabels are the labels only the chart puts on objects (never on Pod
// templates): the comparison with the kustomizations drops them.
var helmLabels = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance"}

// hookAnnotations make the secret-init objects a Helm hook.
var hookAnnotations = []string{"helm.sh/hook", "helm.sh/hook-weight", "helm.sh/hook-delete-policy"}

func TestChartDefaultIsInstall(t *testing.T) {
	t.Parallel()
	for _, d := range diffWithKustomization(t, "install", nil) {
		t.Error(d)
	}
}

func TestChartHAIsHA(t *testing.T) {
	t.Parallel()
	for _, d := range diffWithKustomization(t, "ha", map[string]any{"ha": map[string]any{"enabled": true}}) {
		t.Error(d)
	}
}

// TestChartAppNamespacesIsComponent wants the chart's
// applicationNamespaces with ha.enabled to install what deploy/ha does
// with the component application-namespaces and the flag its comment
// tells to add (testdata/ha-application-namespaces).
func TestChartAppNamespacesIsComponent(t *testing.T) {
	t.Parallel()
	values := map[string]any{"ha": map[string]any{"enabled": true}, "applicationNamespaces": []any{"team-*"}}
	for _, d := range diffWithKustomization(t, "testdata/ha-application-namespaces", values) {
		t.Error(d)
	}
}

// TestChartChatopsIsComponent wants the chart's chatops.enabled to install
// what deploy/install does with the component chatops
// (testdata/install-chatops).
func TestChartChatopsIsComponent(t *testing.T) {
	t.Parallel()
	values := map[string]any{"chatops": map[string]any{"enabled": true}}
	for _, d := range diffWithKustomization(t, "testdata/install-chatops", values) {
		t.Error(d)
	}
}

// TestChartDiffSeesChanges keeps the comparison honest: a value that
// changes one field of one object, or adds one, must be reported.
func TestChartDiffSeesChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"image": map[string]any{"tag": "v9.9.9"}}, `Deployment.apps graphcd/graphcd-server: chart and deploy/install differ`},
		{map[string]any{"configs": map[string]any{"cm": map[string]any{"url": "https://cd.example.com"}}}, `ConfigMap. graphcd/graphcd-cm: chart and deploy/install differ`},
		{map[string]any{"ingress": map[string]any{"enabled": true}}, `Ingress.networking.k8s.io graphcd/graphcd-server is in the chart's render but not in deploy/install`},
		{map[string]any{"crds": map[string]any{"install": false}}, `CustomResourceDefinition.apiextensions.k8s.io applications.graphcd.io is in deploy/install but not in the chart's render`},
	} {
		values := tc.values
		if _, ok := values["crds"]; !ok {
			// Faster under -race; the CRDs missing from the render are
			// differences too, besides the one looked for.
			values = maps.Clone(values)
			values["crds"] = map[string]any{"install": false}
		}
		diffs := diffWithKustomization(t, "install", values)
		if len(diffs) == 0 || !slices.ContainsFunc(diffs, func(d string) bool { return strings.HasPrefix(d, tc.want) }) {
			t.Errorf("values %v: differences %q, want one starting %q", tc.values, diffs, tc.want)
		}
	}
}

// diffWithKustomization renders the chart with values and compares it
// with the objects of deploy/<dir>, field for field, once Helm's own
// labels and annotations are dropped and both are indexed by kind,
// namespace and name. It returns one readable difference per object.
func diffWithKustomization(t *testing.T, dir string, values map[string]any) []string {
	t.Helper()
	want := byKey(t, buildKustomization(t, dir))
	rendered := renderChart(t, releaseNamespace, values)
	for _, o := range rendered {
		dropHelmMetadata(t, o)
	}
	got := byKey(t, rendered)
	keys := slices.Sorted(maps.Keys(want))
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	var diffs []string
	for _, k := range keys {
		g, w := got[k], want[k]
		switch {
		case g == nil:
			diffs = append(diffs, fmt.Sprintf("%s is in deploy/%s but not in the chart's render", k, dir))
		case w == nil:
			diffs = append(diffs, fmt.Sprintf("%s is in the chart's render but not in deploy/%s", k, dir))
		default:
			if diff := cmp.Diff(g.Object, w.Object); diff != "" {
				diffs = append(diffs, fmt.Sprintf("%s: chart and deploy/%s differ (-chart +kustomize):\n%s", k, dir, diff))
			}
		}
	}
	return diffs
}

// dropHelmMetadata removes from a rendered object what the chart adds
// for Helm, and fails if Helm's annotations are where they should not be.
func dropHelmMetadata(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	labels := o.GetLabels()
	for _, l := range helmLabels {
		delete(labels, l)
	}
	o.SetLabels(labels)

	a := o.GetAnnotations()
	if o.GetKind() == "CustomResourceDefinition" && a["helm.sh/resource-policy"] == "keep" {
		delete(a, "helm.sh/resource-policy")
	}
	if o.GetName() == "graphcd-secret-init" && o.GetKind() != "NetworkPolicy" {
		for _, k := range hookAnnotations {
			if _, ok := a[k]; !ok {
				t.Errorf("%s/%s: no annotation %s: the secret-init objects are a Helm hook", o.GetKind(), o.GetName(), k)
			}
			delete(a, k)
		}
	}
	if len(a) == 0 {
		a = nil
	}
	o.SetAnnotations(a)
}

// byKey indexes objects by group, kind, namespace and name, and fails on
// a duplicate.
func byKey(t *testing.T, objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		k := gvk.Kind + "." + gvk.Group + " " + filepath.Join(o.GetNamespace(), o.GetName())
		if _, dup := m[k]; dup {
			t.Errorf("%s twice", k)
		}
		m[k] = o
	}
	return m
}

// renderChart renders the chart as `helm install --dry-run` (client only)
// does, as release graphcd in namespace, and returns its objects: the
// hooks first, in the order Helm runs them, then the rest.
func renderChart(t *testing.T, namespace string, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := tryRenderChart(namespace, values)
	if err != nil {
		t.Fatalf("render %s: %v", chartDir, err)
	}
	return objs
}

func tryRenderChart(namespace string, values map[string]any) ([]*unstructured.Unstructured, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(driver.NewMemory()),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.ClientOnly = true
	install.ReleaseName = releaseName
	install.Namespace = namespace
	if values == nil {
		values = map[string]any{}
	}
	rel, err := install.Run(chrt, values)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, h := range rel.Hooks {
		o, err := decodeManifests(h.Manifest)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	o, err := decodeManifests(rel.Manifest)
	return append(objs, o...), err
}

// decodeManifests reads a YAML stream of objects, skipping empty
// documents.
func decodeManifests(stream string) ([]*unstructured.Unstructured, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(j) == "null" {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(j); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
}

var (
	builtMu sync.Mutex
	built   = map[string][]*unstructured.Unstructured{}
)

// kustomize builds dir with the kustomize library, in the order
// `kubectl apply -k` applies.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := install.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// buildKustomization is kustomize once per test binary for each dir:
// callers must not change the objects.
func buildKustomization(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if objs, ok := built[dir]; ok {
		return objs
	}
	out := kustomize(t, dir)
	built[dir] = out
	return out
}

// TestChartCRDsAreGenerated wants the chart's copy of the CRDs to be the
// generated files: `make generate` copies them.
func TestChartCRDsAreGenerated(t *testing.T) {
	t.Parallel()
	generated, err := filepath.Glob("../config/crd/bases/*.yaml")
	if err != nil || len(generated) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	copied, err := filepath.Glob(filepath.Join(chartDir, "files/crds/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(copied) != len(generated) {
		t.Errorf("%s/files/crds has %d files, config/crd/bases %d: run make generate", chartDir, len(copied), len(generated))
	}
	for _, g := range generated {
		want, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(chartDir, "files/crds", filepath.Base(g)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s/files/crds/%s is not config/crd/bases' (%v): run make generate", chartDir, filepath.Base(g), err)
		}
	}
}

// TestChartLint runs `helm lint` on the default and the HA values. The one
// message let through is the recommendation of an icon: graphcd has none.
func TestChartLint(t *testing.T) {
	t.Parallel()
	for name, values := range map[string]map[string]any{
		"default": {},
		"ha":      {"ha": map[string]any{"enabled": true}},
	} {
		lint := action.NewLint()
		lint.Strict = true
		res := lint.Run([]string{chartDir}, values)
		for _, err := range res.Errors {
			t.Errorf("helm lint (%s values): %v", name, err)
		}
		for _, m := range res.Messages {
			if m.Severity == support.InfoSev && strings.Contains(m.Err.Error(), "icon is recommended") {
				continue
			}
			t.Errorf("helm lint (%s values): %s", name, m)
		}
	}
}
