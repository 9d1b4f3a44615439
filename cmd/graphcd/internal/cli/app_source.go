package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A sourceEdit changes one source of an Application's spec, as JSON
// decodes it (a map), in place. app set and app unset build a list of
// them from their flags, then apply it to the source --source-position
// chooses.
type sourceEdit func(src map[string]any) error

// chooseSource returns the source of spec that pos (from 1; 0 for a
// single-source app) names: spec.source, or spec.sources[pos-1]. A
// multi-source app needs pos, as in Argo CD.
func chooseSource(spec map[string]any, pos int) (map[string]any, error) {
	if sources, ok := spec["sources"].([]any); ok && len(sources) > 0 {
		if pos < 1 || pos > len(sources) {
			return nil, fmt.Errorf("this application has several sources (%d): choose one with --source-position 1..%d", len(sources), len(sources))
		}
		src, ok := sources[pos-1].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("source %d is not an object", pos)
		}
		return src, nil
	}
	src, ok := spec["source"].(map[string]any)
	if !ok {
		return nil, errors.New("this application has no source")
	}
	if pos > 1 {
		return nil, fmt.Errorf("--source-position %d: this application has a single source", pos)
	}
	return src, nil
}

// block returns src's object under key (helm, kustomize ...), made when
// missing.
func block(src map[string]any, key string) map[string]any {
	m, ok := src[key].(map[string]any)
	if !ok {
		m = map[string]any{}
		src[key] = m
	}
	return m
}

// dropEmpty removes src's object under key when nothing is left in it.
func dropEmpty(src map[string]any, key string) {
	if m, ok := src[key].(map[string]any); ok && len(m) == 0 {
		delete(src, key)
	}
}

// keyValue splits KEY=VALUE, the form of every such flag.
func keyValue(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", fmt.Errorf("--%s %q: want NAME=VALUE", flag, truncate(s, 100))
	}
	return k, v, nil
}

// putNamed sets, in the list m[key], the entry whose field named
// nameField is entry's, or appends entry.
func putNamed(m map[string]any, key, nameField string, entry map[string]any) {
	list, _ := m[key].([]any)
	for i, e := range list {
		if em, ok := e.(map[string]any); ok && em[nameField] == entry[nameField] {
			list[i] = entry
			m[key] = list
			return
		}
	}
	m[key] = append(list, entry)
}

// removeWhere drops the entries of the list m[key] that match, and the
// list when it becomes empty.
func removeWhere(m map[string]any, key string, match func(any) bool) {
	list, _ := m[key].([]any)
	list = slices.DeleteFunc(list, match)
	if len(list) == 0 {
		delete(m, key)
		return
	}
	m[key] = list
}

// named matches list entries (objects) whose nameField is one of names.
func named(nameField string, names []string) func(any) bool {
	return func(e any) bool {
		em, ok := e.(map[string]any)
		if !ok {
			return false
		}
		n, _ := em[nameField].(string)
		return slices.Contains(names, n)
	}
}

// imageName is the name part of a kustomize image override:
// "nginx=nginx:1.27", "nginx:1.27", "nginx@sha256:..." are all nginx.
func imageName(s string) string {
	if i := strings.IndexAny(s, "=@"); i >= 0 {
		s = s[:i]
	}
	// A tag's colon comes after the last slash; a registry's port before.
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		s = s[:i]
	}
	return s
}

// sourceSetFlags are app set's flags that change how a source renders:
// Helm, Kustomize, directory (and Jsonnet) and plugin options.
type sourceSetFlags struct {
	helmSet, params, helmSetString, helmSetFile, values []string
	valuesLiteralFile, releaseName, helmVersion         string
	kustomizeImages, kustomizeReplicas                  []string
	commonLabels, commonAnnotations                     []string
	namePrefix, nameSuffix, kustomizeNS, kustomizeVer   string
	dirInclude, dirExclude                              string
	tlaStr, tlaCode, extVarStr, extVarCode, libs        []string
	pluginEnv                                           []string
	skipCRDs, ignoreMissing, passCredentials, recurse   bool
}

func (s *sourceSetFlags) add(f *pflag.FlagSet) {
	f.StringArrayVarP(&s.helmSet, "helm-set", "p", nil, "set a Helm parameter, NAME=VALUE (repeatable); --parameter says the same")
	f.StringArrayVar(&s.params, "parameter", nil, "set a Helm parameter, NAME=VALUE (repeatable)")
	f.StringArrayVar(&s.helmSetString, "helm-set-string", nil, "set a Helm parameter as a string, NAME=VALUE (repeatable)")
	f.StringArrayVar(&s.helmSetFile, "helm-set-file", nil, "set a Helm parameter from a file in the repository, NAME=PATH (repeatable)")
	f.StringArrayVar(&s.values, "values", nil, "the Helm values files, in the repository (repeatable; replaces the list)")
	f.StringVar(&s.valuesLiteralFile, "values-literal-file", "", "a local file whose content becomes the Helm values (helm.values)")
	f.StringVar(&s.releaseName, "release-name", "", "the Helm release name")
	f.StringVar(&s.helmVersion, "helm-version", "", "the Helm version, v3")
	f.BoolVar(&s.skipCRDs, "helm-skip-crds", false, "do not install the chart's CRDs")
	f.BoolVar(&s.ignoreMissing, "ignore-missing-value-files", false, "ignore --values files that are not in the repository")
	f.BoolVar(&s.passCredentials, "helm-pass-credentials", false, "pass the repository's credentials to every domain the chart pulls from")
	f.StringArrayVar(&s.kustomizeImages, "kustomize-image", nil, "a Kustomize image override, e.g. nginx=nginx:1.27 (repeatable; replaces the same image's)")
	f.StringVar(&s.namePrefix, "nameprefix", "", "the Kustomize name prefix")
	f.StringVar(&s.nameSuffix, "namesuffix", "", "the Kustomize name suffix")
	f.StringArrayVar(&s.kustomizeReplicas, "kustomize-replica", nil, "a Kustomize replica count, NAME=COUNT (repeatable)")
	f.StringVar(&s.kustomizeNS, "kustomize-namespace", "", "the Kustomize namespace")
	f.StringVar(&s.kustomizeVer, "kustomize-version", "", "the Kustomize version (one named in the settings' kustomize.version.*)")
	f.StringArrayVar(&s.commonLabels, "kustomize-common-label", nil, "a label Kustomize adds to every object, KEY=VALUE (repeatable)")
	f.StringArrayVar(&s.commonAnnotations, "kustomize-common-annotation", nil, "an annotation Kustomize adds to every object, KEY=VALUE (repeatable)")
	f.BoolVar(&s.recurse, "directory-recurse", false, "read the directory's subdirectories too")
	f.StringVar(&s.dirInclude, "directory-include", "", "only the directory's files that match this glob, e.g. '*.yaml' or '{a.yaml,b.json}'")
	f.StringVar(&s.dirExclude, "directory-exclude", "", "leave out the directory's files that match this glob")
	f.StringArrayVar(&s.tlaStr, "jsonnet-tla-str", nil, "a Jsonnet top-level argument, NAME=STRING (repeatable)")
	f.StringArrayVar(&s.tlaCode, "jsonnet-tla-code", nil, "a Jsonnet top-level argument, NAME=CODE (repeatable)")
	f.StringArrayVar(&s.extVarStr, "jsonnet-ext-var-str", nil, "a Jsonnet external variable, NAME=STRING (repeatable)")
	f.StringArrayVar(&s.extVarCode, "jsonnet-ext-var-code", nil, "a Jsonnet external variable, NAME=CODE (repeatable)")
	f.StringArrayVar(&s.libs, "jsonnet-libs", nil, "Jsonnet library paths (repeatable; replaces the list)")
	f.StringArrayVar(&s.pluginEnv, "plugin-env", nil, "an environment variable of the config management plugin, NAME=VALUE (repeatable)")
}

// edits turns the flags c was given into source edits. Local files
// (--values-literal-file) are read here, before anything is written.
func (s *sourceSetFlags) edits(c *cobra.Command) ([]sourceEdit, error) {
	f := c.Flags()
	var out []sourceEdit
	setIn := func(blockKey, flag, key string, v any) {
		if f.Changed(flag) {
			out = append(out, func(src map[string]any) error { block(src, blockKey)[key] = v; return nil })
		}
	}
	// NAME=VALUE lists merged by name into blockKey.listKey, each entry
	// made by entry.
	named := func(blockPath []string, flag, listKey string, values []string, entry func(k, v string) (map[string]any, error)) error {
		for _, kv := range values {
			k, v, err := keyValue(flag, kv)
			if err != nil {
				return err
			}
			e, err := entry(k, v)
			if err != nil {
				return err
			}
			out = append(out, func(src map[string]any) error {
				m := src
				for _, b := range blockPath {
					m = block(m, b)
				}
				putNamed(m, listKey, "name", e)
				return nil
			})
		}
		return nil
	}
	param := func(forceString bool) func(k, v string) (map[string]any, error) {
		return func(k, v string) (map[string]any, error) {
			e := map[string]any{"name": k, "value": v}
			if forceString {
				e["forceString"] = true
			}
			return e, nil
		}
	}
	jsonnet := func(code bool) func(k, v string) (map[string]any, error) {
		return func(k, v string) (map[string]any, error) {
			return map[string]any{"name": k, "value": v, "code": code}, nil
		}
	}
	for _, n := range []struct {
		path   []string
		flag   string
		list   string
		values []string
		entry  func(k, v string) (map[string]any, error)
	}{
		{[]string{"helm"}, "helm-set", "parameters", s.helmSet, param(false)},
		{[]string{"helm"}, "parameter", "parameters", s.params, param(false)},
		{[]string{"helm"}, "helm-set-string", "parameters", s.helmSetString, param(true)},
		{[]string{"helm"}, "helm-set-file", "fileParameters", s.helmSetFile, func(k, v string) (map[string]any, error) {
			return map[string]any{"name": k, "path": v}, nil
		}},
		{[]string{"kustomize"}, "kustomize-replica", "replicas", s.kustomizeReplicas, func(k, v string) (map[string]any, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("--kustomize-replica %q: want NAME=COUNT with a count from 0", truncate(k+"="+v, 100))
			}
			return map[string]any{"name": k, "count": n}, nil
		}},
		{[]string{"directory", "jsonnet"}, "jsonnet-tla-str", "tlas", s.tlaStr, jsonnet(false)},
		{[]string{"directory", "jsonnet"}, "jsonnet-tla-code", "tlas", s.tlaCode, jsonnet(true)},
		{[]string{"directory", "jsonnet"}, "jsonnet-ext-var-str", "extVars", s.extVarStr, jsonnet(false)},
		{[]string{"directory", "jsonnet"}, "jsonnet-ext-var-code", "extVars", s.extVarCode, jsonnet(true)},
		{[]string{"plugin"}, "plugin-env", "env", s.pluginEnv, func(k, v string) (map[string]any, error) {
			return map[string]any{"name": k, "value": v}, nil
		}},
	} {
		if err := named(n.path, n.flag, n.list, n.values, n.entry); err != nil {
			return nil, err
		}
	}
	if f.Changed("values") {
		out = append(out, func(src map[string]any) error { block(src, "helm")["valueFiles"] = toAny(s.values); return nil })
	}
	if f.Changed("values-literal-file") {
		raw, err := os.ReadFile(s.valuesLiteralFile)
		if err != nil {
			return nil, fmt.Errorf("--values-literal-file: %w", err)
		}
		out = append(out, func(src map[string]any) error {
			h := block(src, "helm")
			delete(h, "valuesObject") // helm.values and valuesObject say the same; the new one wins
			h["values"] = string(raw)
			return nil
		})
	}
	setIn("helm", "release-name", "releaseName", s.releaseName)
	setIn("helm", "helm-version", "version", s.helmVersion)
	setIn("helm", "helm-skip-crds", "skipCrds", s.skipCRDs)
	setIn("helm", "ignore-missing-value-files", "ignoreMissingValueFiles", s.ignoreMissing)
	setIn("helm", "helm-pass-credentials", "passCredentials", s.passCredentials)
	for _, img := range s.kustomizeImages {
		if imageName(img) == "" {
			return nil, fmt.Errorf("--kustomize-image %q: want IMAGE, IMAGE=NEW:TAG or IMAGE:TAG", truncate(img, 100))
		}
		out = append(out, func(src map[string]any) error {
			k := block(src, "kustomize")
			removeWhere(k, "images", func(e any) bool { s, _ := e.(string); return imageName(s) == imageName(img) })
			k["images"] = append(toAnyList(k["images"]), img)
			return nil
		})
	}
	setIn("kustomize", "nameprefix", "namePrefix", s.namePrefix)
	setIn("kustomize", "namesuffix", "nameSuffix", s.nameSuffix)
	setIn("kustomize", "kustomize-namespace", "namespace", s.kustomizeNS)
	setIn("kustomize", "kustomize-version", "version", s.kustomizeVer)
	for flag, vals := range map[string][]string{"kustomize-common-label": s.commonLabels, "kustomize-common-annotation": s.commonAnnotations} {
		key := map[string]string{"kustomize-common-label": "commonLabels", "kustomize-common-annotation": "commonAnnotations"}[flag]
		for _, kv := range vals {
			k, v, err := keyValue(flag, kv)
			if err != nil {
				return nil, err
			}
			out = append(out, func(src map[string]any) error { block(block(src, "kustomize"), key)[k] = v; return nil })
		}
	}
	setIn("directory", "directory-recurse", "recurse", s.recurse)
	setIn("directory", "directory-include", "include", s.dirInclude)
	setIn("directory", "directory-exclude", "exclude", s.dirExclude)
	if f.Changed("jsonnet-libs") {
		out = append(out, func(src map[string]any) error {
			block(block(src, "directory"), "jsonnet")["libs"] = toAny(s.libs)
			return nil
		})
	}
	return out, nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func toAnyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// sourceUnsetFlags are app unset's flags, as Argo CD's argocd app unset.
type sourceUnsetFlags struct {
	values, params, images, replicas, pluginEnv []string
	valuesLiteral, namePrefix, nameSuffix       bool
	kustomizeVer, kustomizeNS                   bool
	ignoreMissing, passCredentials, ref         bool
}

func (s *sourceUnsetFlags) add(f *pflag.FlagSet) {
	f.StringArrayVar(&s.values, "values", nil, "remove this Helm values file (repeatable)")
	f.BoolVar(&s.valuesLiteral, "values-literal", false, "remove the Helm values given inline (helm.values, helm.valuesObject)")
	f.StringArrayVarP(&s.params, "parameter", "p", nil, "remove the Helm parameter of this name, a value or a file one (repeatable)")
	f.StringArrayVar(&s.images, "kustomize-image", nil, "remove the Kustomize override of this image, e.g. nginx (repeatable)")
	f.StringArrayVar(&s.replicas, "kustomize-replica", nil, "remove the Kustomize replica count of this name (repeatable)")
	f.BoolVar(&s.namePrefix, "nameprefix", false, "remove the Kustomize name prefix")
	f.BoolVar(&s.nameSuffix, "namesuffix", false, "remove the Kustomize name suffix")
	f.BoolVar(&s.kustomizeVer, "kustomize-version", false, "remove the Kustomize version")
	f.BoolVar(&s.kustomizeNS, "kustomize-namespace", false, "remove the Kustomize namespace")
	f.BoolVar(&s.ignoreMissing, "ignore-missing-value-files", false, "stop ignoring missing Helm values files")
	f.BoolVar(&s.passCredentials, "pass-credentials", false, "stop passing the repository's credentials to other domains")
	f.StringArrayVar(&s.pluginEnv, "plugin-env", nil, "remove the plugin's environment variable of this name (repeatable)")
	f.BoolVar(&s.ref, "ref", false, "remove the source's ref (the name other sources use for its files)")
}

// edit removes from src what the flags name.
func (s *sourceUnsetFlags) edit(src map[string]any) error {
	if h, ok := src["helm"].(map[string]any); ok {
		removeWhere(h, "valueFiles", func(e any) bool { v, _ := e.(string); return slices.Contains(s.values, v) })
		if s.valuesLiteral {
			delete(h, "values")
			delete(h, "valuesObject")
		}
		removeWhere(h, "parameters", named("name", s.params))
		removeWhere(h, "fileParameters", named("name", s.params))
		if s.ignoreMissing {
			delete(h, "ignoreMissingValueFiles")
		}
		if s.passCredentials {
			delete(h, "passCredentials")
		}
		dropEmpty(src, "helm")
	}
	if k, ok := src["kustomize"].(map[string]any); ok {
		removeWhere(k, "images", func(e any) bool {
			v, _ := e.(string)
			return slices.ContainsFunc(s.images, func(img string) bool { return imageName(img) == imageName(v) })
		})
		removeWhere(k, "replicas", named("name", s.replicas))
		for flag, key := range map[*bool]string{&s.namePrefix: "namePrefix", &s.nameSuffix: "nameSuffix", &s.kustomizeVer: "version", &s.kustomizeNS: "namespace"} {
			if *flag {
				delete(k, key)
			}
		}
		dropEmpty(src, "kustomize")
	}
	if p, ok := src["plugin"].(map[string]any); ok {
		removeWhere(p, "env", named("name", s.pluginEnv))
	}
	if s.ref {
		delete(src, "ref")
	}
	return nil
}
