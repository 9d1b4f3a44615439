package kustomize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/openapi"

	"github.com/graphcd/graphcd/reposerver/render"
)

// openapiMu guards kustomize's process-wide OpenAPI schema. kustomize sets
// it from the top-level kustomization's openapi field on every build, and a
// custom schema would otherwise stay in force for later builds (of other
// applications) too. Builds that leave the field unset only read the
// default schema and share the lock; a build with a custom schema holds it
// alone and resets the schema when it is done.
var openapiMu sync.RWMutex

// Render builds the kustomization at req.Path in the checkout at
// req.RepoRoot, as Argo CD's kustomize source does, with the overrides of
// req.Source.Kustomize applied. It reads nothing outside req.RepoRoot and
// writes nothing at all; see the package documentation.
func Render(ctx context.Context, req render.Request) ([]*unstructured.Unstructured, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	build, err := parseBuildOptions(req.KustomizeBuildOptions)
	if err != nil {
		return nil, err
	}
	if k := req.Source.Kustomize; k != nil {
		if err := checkVersion(k.Version); err != nil {
			return nil, err
		}
	}
	fsys, err := newRepoFS(ctx, req, build)
	if err != nil {
		return nil, fmt.Errorf("kustomize: %w", err)
	}
	defer fsys.close()

	appPath := req.Path
	if appPath == "" {
		appPath = "."
	}
	appDir, customOpenAPI, err := prepare(fsys, appPath, req)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", appPath, err)
	}

	if customOpenAPI {
		openapiMu.Lock()
		defer func() {
			openapi.ResetOpenAPI()
			openapiMu.Unlock()
		}()
	} else {
		openapiMu.RLock()
		defer openapiMu.RUnlock()
	}
	m, err := runBuild(fsys, appDir, build)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", appPath, ctxErr)
	}
	if err != nil {
		if refused := fsys.refusal(); refused != nil && !errors.Is(err, refused) {
			return nil, fmt.Errorf("kustomize build %s: %w (%w)", appPath, refused, err)
		}
		return nil, fmt.Errorf("kustomize build %s: %w", appPath, err)
	}

	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: encode output: %w", appPath, err)
	}
	objs, err := render.Decode("kustomize build "+appPath, out, req.Limits)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", appPath, err)
	}
	return objs, nil
}

// prepare finds the app's kustomization and, when the source has
// overrides, puts an edited copy of it in the file system's overlay. It
// returns the app directory as kustomize sees it and whether the
// kustomization sets its own OpenAPI schema.
func prepare(fsys *repoFS, appPath string, req render.Request) (string, bool, error) {
	_, appDir, _, err := fsys.resolve(appPath)
	if err != nil {
		return "", false, err
	}
	if !fsys.IsDir(appDir) {
		return "", false, errors.New("not a directory in the repository")
	}
	kustFile := ""
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if fsys.Exists(path.Join(appDir, name)) {
			kustFile = path.Join(appDir, name)
			break
		}
	}
	if kustFile == "" {
		return "", false, fmt.Errorf("no kustomization file (one of %s)", strings.Join(konfig.RecognizedKustomizationFileNames(), ", "))
	}
	data, err := fsys.ReadFile(kustFile)
	if err != nil {
		return "", false, err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return "", false, fmt.Errorf("parse %s: %w", shownPath(kustFile), err)
	}
	opts := req.Source.Kustomize
	if !hasOverrides(opts) {
		return appDir, len(k.OpenAPI) > 0, nil
	}
	k.FixKustomization()
	components, err := resolveComponents(fsys, appDir, opts.Components, opts.IgnoreMissingComponents)
	if err != nil {
		return "", false, err
	}
	if err := applyOverrides(&k, opts, req.BuildEnv(), components); err != nil {
		return "", false, err
	}
	edited, err := json.Marshal(&k)
	if err != nil {
		return "", false, fmt.Errorf("encode edited %s: %w", shownPath(kustFile), err)
	}
	fsys.overlay[kustFile] = edited
	return appDir, len(k.OpenAPI) > 0, nil
}

// resolveComponents turns the components override (paths or globs relative
// to the app directory) into paths relative to it, as `kustomize edit add
// component` does. A component that matches nothing is an error unless
// ignoreMissing.
func resolveComponents(fsys *repoFS, appDir string, components []string, ignoreMissing bool) ([]string, error) {
	var out []string
	for _, c := range components {
		if isRemoteBase(c) {
			return nil, fmt.Errorf("components %q: %w", c, ErrRemote)
		}
		matches, err := fsys.Glob(path.Join(appDir, c))
		if err != nil {
			return nil, fmt.Errorf("component %q: %w", c, err)
		}
		var found []string
		for _, m := range matches {
			if _, _, _, err := fsys.resolve(m); err != nil {
				return nil, fmt.Errorf("component %q: %w", c, err)
			}
			found = append(found, relTo(appDir, m))
		}
		if len(found) == 0 {
			if ignoreMissing {
				continue
			}
			return nil, fmt.Errorf("component %q not found", c)
		}
		out = append(out, found...)
	}
	return out, nil
}

// relTo is target relative to dir, both virtual paths.
func relTo(dir, target string) string {
	d := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	t := strings.Split(strings.TrimPrefix(target, "/"), "/")
	i := 0
	for i < len(d) && i < len(t) && d[i] == t[i] {
		i++
	}
	parts := make([]string, 0, len(d)-i+len(t)-i)
	for range d[i:] {
		parts = append(parts, "..")
	}
	parts = append(parts, t[i:]...)
	if len(parts) == 0 {
		return "."
	}
	return strings.Join(parts, "/")
}

// runBuild runs kustomize with plugins (exec, Go, KRM functions, Helm)
// disabled and, unless the build options restrict them further, load
// restrictions left to fsys, which confines every read to what the render
// was given. helmCharts reach kustomize already inflated. A panic in
// kustomize becomes an error.
func runBuild(fsys *repoFS, appDir string, build buildOptions) (m resmap.ResMap, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	opts := krusty.MakeDefaultOptions()
	// The kustomize CLI, which Argo CD runs, sorts the output in its
	// legacy order unless the kustomization sets sortOptions (or
	// --reorder says otherwise).
	opts.Reorder = build.reorder
	opts.LoadRestrictions = build.loadRestrictions
	opts.AddManagedbyLabel = build.managedBy
	opts.PluginConfig = types.DisabledPluginConfig()
	return krusty.MakeKustomizer(opts).Run(fsys, appDir)
}
