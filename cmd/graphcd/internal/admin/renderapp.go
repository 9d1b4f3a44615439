package admin

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver"
)

// maxAppManifestSize bounds the --app file.
const maxAppManifestSize = 1 << 20

// runRenderApp renders every source of the Application in o.app through
// manifests.RenderApp, the controller's path, with a project that
// permits every repository: offline, the user's own files and
// repositories are theirs to read.
func runRenderApp(c *cobra.Command, o *renderOptions) error {
	app, err := readApp(o.app)
	if err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	sources, _ := app.Spec.EffectiveSources()
	if len(sources) == 0 {
		return &command.UsageError{Cmd: c, Err: fmt.Errorf("%s: the Application has no source", o.app)}
	}
	revisions, err := sourceRevisions(o.sourceRevisions, len(sources))
	if err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	svc, cleanup, err := o.service(c, true)
	if err != nil {
		return err
	}
	defer cleanup()
	r, proj, err := o.renderer(c, svc, app.ProjectName())
	if err != nil {
		return err
	}
	res, err := r.RenderApp(c.Context(), manifests.AppRequest{
		App: app, Project: proj, Sources: sources, Revisions: revisions, KubeVersion: o.kubeVersion,
	})
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for i, one := range res.Sources {
		slog.Debug("rendered", "source", i+1, "revision", res.Revisions[i])
		if one != nil {
			objs = append(objs, one.Manifests...)
		}
	}
	return printObjects(c, o, objs)
}

// renderer is the controller's renderer over svc with the tool settings
// of --settings, and a project named name that permits every repository
// and destination: offline, the user's own files and repositories are
// theirs to read.
func (o *renderOptions) renderer(c *cobra.Command, svc manifests.Generator, name string) (*manifests.Renderer, *v1alpha1.AppProject, error) {
	s, err := loadSettings(c, o.settings)
	if err != nil {
		return nil, nil, err
	}
	tools := reposerver.ToolOptions{HelmValuesFileSchemes: s.HelmValuesFileSchemes, KustomizeBuildOptions: s.KustomizeBuildOptions}
	proj := &v1alpha1.AppProject{Spec: v1alpha1.AppProjectSpec{
		SourceRepos:  []string{"*"},
		Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
	}}
	proj.Name = name
	return &manifests.Renderer{Repo: svc, Tools: func() reposerver.ToolOptions { return tools }}, proj, nil
}

// readApp reads and decodes an Application manifest file.
func readApp(path string) (*v1alpha1.Application, error) {
	f, err := os.Open(path) //nolint:gosec // the user's own file, named on the command line
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxAppManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAppManifestSize {
		return nil, fmt.Errorf("%s: more than %d bytes", path, maxAppManifestSize)
	}
	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(b, &app); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if gv := app.APIVersion; app.Kind != "Application" || (gv != v1alpha1.GroupVersion.String() && gv != "argoproj.io/v1alpha1") {
		return nil, fmt.Errorf("%s: not an Application of %s (or argoproj.io/v1alpha1), but %s %s", path, v1alpha1.GroupVersion, gv, app.Kind)
	}
	return &app, nil
}

// sourceRevisions turns POSITION=REVISION flags into revisions by
// position for n sources.
func sourceRevisions(flags []string, n int) ([]string, error) {
	out := make([]string, n)
	for _, kv := range flags {
		p, rev, ok := strings.Cut(kv, "=")
		pos, err := strconv.Atoi(p)
		if !ok || err != nil || rev == "" {
			return nil, fmt.Errorf("--source-revision %q: want POSITION=REVISION", kv)
		}
		if pos < 1 || pos > n {
			return nil, fmt.Errorf("--source-revision %q: the application has sources 1 to %d", kv, n)
		}
		out[pos-1] = rev
	}
	return out, nil
}
