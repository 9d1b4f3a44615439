package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// maxValuesFileSize bounds one values file or file parameter.
const maxValuesFileSize int64 = 10 << 20

// valuesFor merges the Helm values an application asks for, in the order
// `helm template` applies Argo CD's flags: valueFiles in order, then the
// inline values (Argo CD passes them as one more values file), then
// parameters (--set), forceString parameters (--set-string), and
// fileParameters (--set-file). appDir is the application's directory in
// t, where relative paths start. As in Argo CD, value file paths,
// parameter values and file parameter paths may refer to the build
// environment ($ARGOCD_APP_NAME, ${ARGOCD_APP_REVISION}; $$ is a "$").
func valuesFor(t *tree, appDir string, h *v1alpha1.ApplicationSourceHelm, env render.BuildEnv) (map[string]any, error) {
	base := map[string]any{}
	if h == nil {
		return base, nil
	}
	for _, vf := range h.ValueFiles {
		if !refSource(vf, env) {
			vf = env.Expand(vf)
		}
		data, err := readAppFile(t, appDir, vf)
		if errors.Is(err, fs.ErrNotExist) && h.IgnoreMissingValueFiles {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("values file %q: %w", vf, err)
		}
		m, err := parseValues(data)
		if err != nil {
			return nil, fmt.Errorf("values file %q: %w", vf, err)
		}
		base = mergeValues(base, m)
	}

	inline, err := inlineValues(h)
	if err != nil {
		return nil, err
	}
	base = mergeValues(base, inline)

	for _, p := range h.Parameters {
		if p.ForceString {
			continue
		}
		if err := strvals.ParseInto(p.Name+"="+escapeSetValue(env.Expand(p.Value)), base); err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
	}
	for _, p := range h.Parameters {
		if !p.ForceString {
			continue
		}
		if err := strvals.ParseIntoString(p.Name+"="+escapeSetValue(env.Expand(p.Value)), base); err != nil {
			return nil, fmt.Errorf("parameter %q: %w", p.Name, err)
		}
	}
	for _, p := range h.FileParameters {
		reader := func(rs []rune) (any, error) {
			data, err := readAppFile(t, appDir, string(rs))
			if err != nil {
				return nil, err
			}
			return string(data), nil
		}
		if err := strvals.ParseIntoFile(p.Name+"="+env.Expand(p.Path), base, reader); err != nil {
			return nil, fmt.Errorf("file parameter %q: %w", p.Name, err)
		}
	}
	return base, nil
}

// inlineValues parses valuesObject, or values when valuesObject is unset:
// valuesObject wins over values, as in Argo CD.
func inlineValues(h *v1alpha1.ApplicationSourceHelm) (map[string]any, error) {
	if h.ValuesObject != nil && len(h.ValuesObject.Raw) > 0 {
		m, err := parseValues(h.ValuesObject.Raw)
		if err != nil {
			return nil, fmt.Errorf("valuesObject: %w", err)
		}
		return m, nil
	}
	if strings.TrimSpace(h.Values) == "" {
		return map[string]any{}, nil
	}
	if int64(len(h.Values)) > maxValuesFileSize {
		return nil, fmt.Errorf("values: more than %d bytes: %w", maxValuesFileSize, render.ErrTooLarge)
	}
	m, err := parseValues([]byte(h.Values))
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	return m, nil
}

func parseValues(data []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// refSource reports whether a value file names another source of a
// multi-source app ($ref/path): a "$" whose name, up to the first "/", is
// not one of the build environment's. Such a path is not expanded.
func refSource(name string, env render.BuildEnv) bool {
	rest, ok := strings.CutPrefix(name, "$")
	if !ok {
		return false
	}
	ref, _, ok := strings.Cut(rest, "/")
	_, known := env[ref]
	return ok && !known && !strings.HasPrefix(ref, "{")
}

// readAppFile reads a values file or file parameter named relative to the
// application directory. Remote URLs and $ref sources are refused;
// absolute paths, ".." that climbs out of the repository and symlinks that
// point out of it fail with render.ErrOutsideRoot.
func readAppFile(t *tree, appDir, name string) ([]byte, error) {
	if strings.HasPrefix(name, "$") {
		return nil, errors.New("$ref value sources (multi-source applications) are not supported")
	}
	if u, err := url.Parse(name); err == nil && u.Scheme != "" && u.Host != "" {
		return nil, errors.New("remote value files are not supported")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") {
		return nil, fmt.Errorf("path %q is absolute: %w", name, render.ErrOutsideRoot)
	}
	rel, err := relPath(filepath.Join(appDir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	resolved, err := t.resolve(filepath.ToSlash(rel))
	if err != nil {
		return nil, err
	}
	return t.readFile(resolved, maxValuesFileSize)
}

// mergeValues merges b into a copy of a: nested maps merge, anything else
// in b replaces what a holds, like Helm's values-file merge.
func mergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeValues(am, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// escapeSetValue escapes the commas of a parameter value, as Argo CD does,
// so that "a,b" stays one value; a "{a,b}" list is passed unchanged.
func escapeSetValue(v string) string {
	if strings.HasPrefix(v, "{") && strings.HasSuffix(v, "}") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == ',' && (i == 0 || v[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
