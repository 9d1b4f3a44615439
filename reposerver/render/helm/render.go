package helm

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ChartSource says where the chart to render comes from.
type ChartSource struct {
	// Dir is the absolute directory of an unpacked chart, such as one
	// returned by Pull. The chart is then its own tree: valueFiles,
	// fileParameters and file:// dependencies resolve inside Dir (as Argo
	// CD resolves them inside a chart from a Helm repository) and
	// req.RepoRoot/req.Path are not used. Empty means the chart at
	// req.Path inside the checkout req.RepoRoot.
	Dir string
	// Dependencies configures fetching of dependencies missing from charts/.
	Dependencies Dependencies
}

// defaultNamespace is what `helm template` uses without --namespace.
const defaultNamespace = "default"

// Render renders a Helm chart like `helm template` does when Argo CD runs
// it, in-process with the Helm SDK: manifests, CRDs from crds/ (unless
// skipCrds) and hooks with their helm.sh/hook annotations (test hooks
// dropped when skipTests); NOTES.txt is left out. A panic in the Helm
// library becomes an error, and Render returns ctx.Err() as soon as ctx is
// done (the abandoned render finishes in the background).
func Render(ctx context.Context, req render.Request, src ChartSource) ([]*unstructured.Unstructured, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		objs []*unstructured.Unstructured
		err  error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("helm render: panic in chart rendering: %v", r)}
			}
		}()
		objs, err := renderChart(ctx, req, src)
		done <- result{objs: objs, err: err}
	}()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("helm render: %w", ctx.Err())
	case r := <-done:
		return r.objs, r.err
	}
}

func renderChart(ctx context.Context, req render.Request, src ChartSource) ([]*unstructured.Unstructured, error) {
	h := req.Source.Helm
	if h == nil {
		h = &v1alpha1.ApplicationSourceHelm{}
	}
	if h.Version != "" && h.Version != "v3" {
		return nil, fmt.Errorf("helm render: Helm version %q is not supported, only v3", h.Version)
	}

	treeDir, appDir := src.Dir, "."
	if treeDir == "" {
		if req.RepoRoot == "" {
			return nil, errors.New("helm render: no repository root")
		}
		rel, err := relPath(req.Path)
		if err != nil {
			return nil, fmt.Errorf("helm render: application path: %w", err)
		}
		treeDir, appDir = req.RepoRoot, rel
	} else if !filepath.IsAbs(treeDir) {
		return nil, errors.New("helm render: chart directory is not absolute")
	}
	t, err := openTree(treeDir)
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	defer t.close()

	// Resolve the app directory once so relative value files and file://
	// dependencies start from where its symlinks really lead.
	chartDir, err := t.resolve(filepath.ToSlash(appDir))
	if err != nil {
		return nil, fmt.Errorf("helm render: application path: %w", err)
	}
	ch, err := t.loadChart(filepath.ToSlash(chartDir))
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	if err := buildDependencies(ctx, t, chartDir, ch, src.Dependencies, h.PassCredentials); err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	if err := checkDependencies(ch); err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	vals, err := valuesFor(t, chartDir, h, req.BuildEnv(), req.FetchedFiles)
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}

	inst, err := templateAction(req, h)
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	rel, err := inst.RunWithContext(ctx, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", shortError{err})
	}
	out := templateOutput(rel, h.SkipTests)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	objs, err := render.Decode("helm template", []byte(out), req.Limits)
	if err != nil {
		return nil, fmt.Errorf("helm render: %w", err)
	}
	return objs, nil
}

// checkDependencies fails when Chart.yaml names a dependency that is still
// missing, as `helm template` does.
func checkDependencies(ch *chart.Chart) error {
	if ch.Metadata == nil || len(ch.Metadata.Dependencies) == 0 {
		return nil
	}
	if err := action.CheckDependencies(ch, ch.Metadata.Dependencies); err != nil {
		return fmt.Errorf("chart dependencies: %w", err)
	}
	return nil
}

// templateAction configures an install the way `helm template` does:
// client-only dry run, no cluster, release name and namespace from the
// application.
func templateAction(req render.Request, h *v1alpha1.ApplicationSourceHelm) (*action.Install, error) {
	cfg := &action.Configuration{Log: func(string, ...any) {}}
	inst := action.NewInstall(cfg)
	inst.DryRun = true
	inst.DryRunOption = "true"
	inst.ClientOnly = true
	inst.Replace = true
	inst.ReleaseName = firstNonEmpty(h.ReleaseName, req.AppName)
	inst.Namespace = firstNonEmpty(h.Namespace, req.Namespace, defaultNamespace)
	inst.IncludeCRDs = !h.SkipCrds
	inst.SkipSchemaValidation = h.SkipSchemaValidation
	if kv := firstNonEmpty(h.KubeVersion, req.KubeVersion); kv != "" {
		parsed, err := chartutil.ParseKubeVersion(kv)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %w", kv, err)
		}
		inst.KubeVersion = parsed
	}
	apis := h.APIVersions
	if len(apis) == 0 {
		apis = req.APIVersions
	}
	inst.APIVersions = chartutil.VersionSet(append([]string(nil), apis...))
	return inst, nil
}

// templateOutput joins manifests and hooks as `helm template` prints them.
func templateOutput(rel *release.Release, skipTests bool) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rel.Manifest))
	b.WriteString("\n")
	for _, hk := range rel.Hooks {
		if skipTests && isTestHook(hk) {
			continue
		}
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", hk.Path, hk.Manifest)
	}
	return b.String()
}

func isTestHook(h *release.Hook) bool {
	for _, e := range h.Events {
		if e == release.HookTest {
			return true
		}
	}
	return false
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// maxErrorText bounds the text of a Helm error: a template recursing
// through include nests its message a thousand times.
const maxErrorText = 4096

// shortError shows the head and tail of a long error and keeps the chain
// for errors.Is and errors.As.
type shortError struct{ err error }

func (e shortError) Error() string {
	msg := e.err.Error()
	if len(msg) <= maxErrorText {
		return msg
	}
	const head, tail = maxErrorText * 3 / 4, maxErrorText / 4
	return fmt.Sprintf("%s ...(%d bytes elided)... %s", msg[:head], len(msg)-head-tail, msg[len(msg)-tail:])
}

func (e shortError) Unwrap() error { return e.err }
