package kustomize

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/helm"
)

// ErrChartNotPulled is wrapped when a helmCharts entry names a chart
// that is neither in the kustomization's chart home nor among the charts
// the caller pulled.
var ErrChartNotPulled = errors.New("chart not found")

// inflatedRoot holds the output of inflated charts, one file per chart:
// /inflated/N/NAME.yaml.
const inflatedRoot = "/inflated"

// defaultChartHome is where kustomize looks for (and pulls) charts,
// relative to the kustomization: helmGlobals.chartHome's default.
const defaultChartHome = "charts"

// defaultReleaseName is the release `helm template` names without one.
const defaultReleaseName = "release-name"

// chartHome is the chart home of the kustomization at vpath.
func chartHome(vpath string, k *types.Kustomization) string {
	home := defaultChartHome
	if k.HelmGlobals != nil && k.HelmGlobals.ChartHome != "" {
		home = k.HelmGlobals.ChartHome
	}
	return path.Join(path.Dir(vpath), home)
}

// inflateCharts renders each of k's helmCharts with graphcd's Helm
// renderer (the Helm source's own path) as kustomize's
// HelmChartInflationGenerator would with the helm binary, puts the
// output in the overlay and adds it to k's resources in place of the
// chart. A chart in the chart home is used as it is; any other must be
// among the charts the caller pulled (render.Request.HelmCharts).
func (f *repoFS) inflateCharts(vpath string, k *types.Kustomization) error {
	home := chartHome(vpath, k)
	for _, c := range k.HelmCharts {
		if c.Name == "" {
			return errors.New("helmCharts: an entry has no name")
		}
		dir, err := f.chartDir(home, c)
		if err != nil {
			return err
		}
		values, err := f.chartValues(path.Dir(vpath), dir, c)
		if err != nil {
			return fmt.Errorf("helmCharts %s: %w", c.Name, err)
		}
		out, err := f.inflate(dir, c, values)
		if err != nil {
			return fmt.Errorf("helmCharts %s: %w", c.Name, err)
		}
		file := fmt.Sprintf("%s/%d/%s.yaml", inflatedRoot, len(f.overlay), c.Name)
		f.overlay[file] = out
		k.Resources = append(k.Resources, relTo(path.Dir(vpath), file))
	}
	k.HelmCharts, k.HelmGlobals = nil, nil
	return nil
}

// chartDir is the directory on disk of chart c: in the chart home when
// it is there (kustomize uses such a chart without pulling), else the
// one the caller pulled.
func (f *repoFS) chartDir(home string, c types.HelmChart) (string, error) {
	local := path.Join(home, c.Name)
	if f.IsDir(local) {
		m, _, rel, err := f.resolve(local)
		if err != nil {
			return "", err
		}
		if m == nil {
			return "", fmt.Errorf("helmCharts %s: %w", c.Name, ErrChartNotPulled)
		}
		return filepath.Join(m.realDir, filepath.FromSlash(rel)), nil
	}
	if c.Repo == "" {
		return "", fmt.Errorf("helmCharts %s: no repo, and no chart at %s: %w", c.Name, shownPath(local), ErrChartNotPulled)
	}
	dir, ok := f.req.HelmCharts[render.ChartKey(c.Repo, c.Name, c.Version)]
	if !ok {
		return "", fmt.Errorf("helmCharts %s %s from %s was not pulled: %w", c.Name, c.Version, c.Repo, ErrChartNotPulled)
	}
	return dir, nil
}

// chartValues merges c's values as kustomize does: its valuesFile (the
// chart's values.yaml by default) and valuesInline by valuesMerge
// (override: inline wins; merge: the file wins; replace: inline alone),
// then additionalValuesFiles in order. Files are read through the file
// system, relative to the kustomization's directory kdir.
func (f *repoFS) chartValues(kdir, chartDir string, c types.HelmChart) (map[string]any, error) {
	var file map[string]any
	if c.ValuesFile != "" {
		var err error
		if file, err = f.readValues(path.Join(kdir, c.ValuesFile)); err != nil {
			return nil, err
		}
	}
	var vals map[string]any
	switch c.ValuesMerge {
	case "", "override":
		vals = helm.MergeValues(file, c.ValuesInline)
	case "merge":
		vals = helm.MergeValues(c.ValuesInline, file)
	case "replace":
		if len(c.ValuesInline) > 0 {
			vals = helm.MergeValues(nil, c.ValuesInline)
		} else {
			vals = helm.MergeValues(nil, file)
		}
	default:
		return nil, fmt.Errorf("valuesMerge %q: want override, merge or replace", c.ValuesMerge)
	}
	for _, extra := range c.AdditionalValuesFiles {
		more, err := f.readValues(path.Join(kdir, extra))
		if err != nil {
			return nil, err
		}
		vals = helm.MergeValues(vals, more)
	}
	return vals, nil
}

// readValues reads a values file through the file system (confined, size
// and budget bounded).
func (f *repoFS) readValues(vpath string) (map[string]any, error) {
	data, err := f.ReadFile(vpath)
	if err != nil {
		return nil, err
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(data, &vals); err != nil {
		return nil, fmt.Errorf("values file %s: %w", shownPath(vpath), err)
	}
	return vals, nil
}

// inflate templates the chart in dir through helm.Render with c's
// options and returns the objects as a YAML stream.
func (f *repoFS) inflate(dir string, c types.HelmChart, values map[string]any) ([]byte, error) {
	raw, err := json.Marshal(values)
	if err != nil {
		return nil, err
	}
	release := c.ReleaseName
	if release == "" {
		release = defaultReleaseName
	}
	req := render.Request{
		AppName: release, Namespace: c.Namespace, KubeVersion: f.req.KubeVersion, APIVersions: f.req.APIVersions, Limits: f.req.Limits,
		Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
			ReleaseName: release, ValuesObject: &runtime.RawExtension{Raw: raw},
			SkipCrds: !c.IncludeCRDs, SkipTests: c.SkipTests, KubeVersion: c.KubeVersion, APIVersions: c.ApiVersions,
		}},
	}
	objs, err := helm.Render(f.ctx, req, helm.ChartSource{Dir: dir})
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, o := range objs {
		if c.SkipHooks && o.GetAnnotations()[helmHookAnnotation] != "" {
			continue
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		out = append(append(out, "---\n"...), b...)
	}
	return out, nil
}

// helmHookAnnotation marks a Helm hook (--no-hooks leaves hooks out).
const helmHookAnnotation = "helm.sh/hook"
