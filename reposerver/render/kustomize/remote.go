package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
)

// ErrRemote is wrapped when a kustomization refers to something kustomize
// would fetch itself that the caller did not fetch: a URL outside
// resources, bases and components (a patch, a generator's file).
var ErrRemote = errors.New("a URL the repository server did not fetch (it fetches those in resources, bases and components; vendor others into the repository)")

// ErrHelmUnsupported is wrapped when a kustomization inflates Helm charts
// that graphcd does not inflate: helmCharts without --enable-helm in
// kustomize.buildOptions (as in Argo CD), or a HelmChartInflationGenerator
// configuration of its own.
var ErrHelmUnsupported = errors.New("helmCharts inflate only with --enable-helm in graphcd-cm's kustomize.buildOptions, and only from the kustomization's helmCharts field")

// scpUser matches the user@ prefix of an scp-style Git URL (git@host:org/repo).
var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemoteBase reports whether kustomize would treat ref, an entry of
// resources, bases, components, generators, transformers or validators, as
// a Git repository to clone or a URL to download. It errs on the side of
// remote: anything with a scheme, an scp-style user or a github.com host.
func isRemoteBase(ref string) bool {
	if isRemoteFile(ref) {
		return true
	}
	lower := strings.ToLower(strings.TrimSpace(ref))
	lower = strings.TrimPrefix(lower, "git::")
	return scpUser.MatchString(lower) ||
		strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:")
}

// isRemoteFile reports whether kustomize would download ref, a file path
// field, over the network.
func isRemoteFile(ref string) bool {
	ref = strings.TrimSpace(ref)
	if strings.Contains(ref, "://") {
		return true
	}
	u, err := url.Parse(ref)
	return err == nil && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https"))
}

// isInline reports whether a generators/transformers/validators or
// patchesStrategicMerge entry is inline YAML rather than a path.
func isInline(entry string) bool { return strings.Contains(entry, "\n") }

// checkFile returns an error when a file kustomize is about to read would
// make it reach the network or run Helm. base is the file's name.
func checkFile(base string, data []byte) error {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		if base == name {
			return checkKustomization(data)
		}
	}
	if bytes.Contains(data, []byte(konfig.BuiltinPluginApiVersion)) {
		return checkBuiltinConfigs(data)
	}
	return nil
}

// checkKustomization checks every field of a kustomization that names
// something to load.
func checkKustomization(data []byte) error {
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil //nolint:nilerr // kustomize reports the parse error itself
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		return ErrHelmUnsupported
	}
	var errs []error
	bases := func(field string, refs []string) {
		for _, r := range refs {
			switch {
			case isInline(r):
				if err := checkBuiltinConfigs([]byte(r)); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", field, err))
				}
			case isRemoteBase(r):
				errs = append(errs, fmt.Errorf("%s %q: %w", field, r, ErrRemote))
			}
		}
	}
	files := func(field string, refs ...string) {
		for _, r := range refs {
			if isInline(r) {
				continue
			}
			// generator file sources are [key=]path
			if _, p, ok := strings.Cut(r, "="); ok && isRemoteFile(p) || isRemoteFile(r) {
				errs = append(errs, fmt.Errorf("%s %q: %w", field, r, ErrRemote))
			}
		}
	}
	bases("resources", k.Resources)
	bases("bases", k.Bases) //nolint:staticcheck // deprecated, still honoured by kustomize
	bases("components", k.Components)
	bases("generators", k.Generators)
	bases("transformers", k.Transformers)
	bases("validators", k.Validators)
	files("crds", k.Crds...)
	files("configurations", k.Configurations...)
	files("openapi.path", k.OpenAPI["path"])
	for _, p := range k.Patches {
		files("patches.path", p.Path)
	}
	for _, p := range k.PatchesJson6902 { //nolint:staticcheck // deprecated, still honoured by kustomize
		files("patchesJson6902.path", p.Path)
	}
	for _, p := range k.PatchesStrategicMerge { //nolint:staticcheck // deprecated, still honoured by kustomize
		files("patchesStrategicMerge", string(p))
	}
	for _, r := range k.Replacements {
		files("replacements.path", r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		files("configMapGenerator", g.FileSources...)
		files("configMapGenerator", g.EnvSources...)
		files("configMapGenerator", g.EnvSource) //nolint:staticcheck // deprecated, still honoured by kustomize
	}
	for _, g := range k.SecretGenerator {
		files("secretGenerator", g.FileSources...)
		files("secretGenerator", g.EnvSources...)
		files("secretGenerator", g.EnvSource) //nolint:staticcheck // deprecated, still honoured by kustomize
	}
	return errors.Join(errs...)
}

// builtinPathKeys are the keys under which builtin generator and
// transformer configurations name files to load.
var builtinPathKeys = map[string]bool{"path": true, "paths": true, "files": true, "envs": true, "env": true}

// checkBuiltinConfigs checks the builtin plugin configurations (apiVersion
// builtin) among the YAML documents in data.
func checkBuiltinConfigs(data []byte) error {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return nil //nolint:nilerr // not a plugin configuration kustomize could use either
		}
		if doc["apiVersion"] != konfig.BuiltinPluginApiVersion {
			continue
		}
		if kind, _ := doc["kind"].(string); strings.HasPrefix(kind, "Helm") {
			return ErrHelmUnsupported
		}
		if err := checkPathValues(doc); err != nil {
			return err
		}
	}
}

func checkPathValues(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, val := range v {
			if builtinPathKeys[k] {
				if err := checkPathValue(k, val); err != nil {
					return err
				}
			}
			if err := checkPathValues(val); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkPathValues(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkPathValue(key string, v any) error {
	var refs []string
	switch v := v.(type) {
	case string:
		refs = []string{v}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				refs = append(refs, s)
			}
		}
	}
	for _, r := range refs {
		if _, p, ok := strings.Cut(r, "="); ok && isRemoteFile(p) || isRemoteFile(r) {
			return fmt.Errorf("%s %q: %w", key, r, ErrRemote)
		}
	}
	return nil
}
