package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/yaml"
)

// MaxValuesFileSize bounds one values file or file parameter.
const MaxValuesFileSize int64 = 10 << 20

// valuesFor merges the Helm values an application asks for, in the order
// `helm template` applies Argo CD's flags: valueFiles in order, then the
// inline values (Argo CD passes them as one more values file), then
// parameters (--set), forceString parameters (--set-string), and
// fileParameters (--set-file). appDir is the application's directory in
// t, where relative paths start. As in Argo CD, value file paths,
// parameter values and file parameter paths may refer to the build
// environment ($ARGOCD_APP_NAME, ${ARGOCD_APP_REVISION}; $$ is a "$").
// A value file of another source ($ref/path) or at a URL comes from
// fetched, where the caller put it.
func valuesFor(t *tree, appDir string, h *v1alpha1.ApplicationSourceHelm, env render.BuildEnv, fetched map[string][]byte) (map[string]any, error) {
	base := map[string]any{}
	if h == nil {
		return base, nil
	}
	for _, vf := range h.ValueFiles {
		var data []byte
		var err error
		if ref, _, ok := refSource(vf); ok {
			var found bool
			if data, found = fetched[vf]; !found {
				err = fmt.Errorf("not found in source %s: %w", ref, fs.ErrNotExist)
			}
		} else if _, ok := RemoteValueFile(vf, env); ok {
			var found bool
			if data, found = fetched[vf]; !found {
				return nil, fmt.Errorf("values file %q: the repository server did not fetch it", vf)
			}
		} else {
			vf = env.Expand(vf)
			data, err = readAppFile(t, appDir, vf)
		}
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
		base = MergeValues(base, m)
	}

	inline, err := inlineValues(h)
	if err != nil {
		return nil, err
	}
	base = MergeValues(base, inline)

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
	if int64(len(h.Values)) > MaxValuesFileSize {
		return nil, fmt.Errorf("values: more than %d bytes: %w", MaxValuesFileSize, render.ErrTooLarge)
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
// not one of the build environment's. It returns the ref with its "$"
// and the path inside that source, not yet expanded.
func refSource(name string) (ref, rel string, ok bool) {
	rest, ok := strings.CutPrefix(name, "$")
	if !ok {
		return "", "", false
	}
	ref, rel, ok = strings.Cut(rest, "/")
	if !ok || ref == "" || strings.HasPrefix(ref, "{") || slices.Contains(render.BuildEnvNames, ref) {
		return "", "", false
	}
	return "$" + ref, rel, true
}

// RefValueFiles returns the value files of src that name another source
// of a multi-source application ($ref/path), grouped by ref ("$values").
func RefValueFiles(src v1alpha1.ApplicationSource) map[string][]string {
	if src.Helm == nil {
		return nil
	}
	var out map[string][]string
	for _, vf := range src.Helm.ValueFiles {
		if ref, _, ok := refSource(vf); ok {
			if out == nil {
				out = map[string][]string{}
			}
			out[ref] = append(out[ref], vf)
		}
	}
	return out
}

// ReadRefFile reads value file name ($ref/path) from dir, the checkout
// of its ref source, as Argo CD does: the path after the ref, with the
// build environment expanded, from the checkout's root. Nothing outside
// dir is read (".." past the root, absolute paths and symlinks that lead
// out fail with render.ErrOutsideRoot), and the file is size-limited. A
// missing file gives an error wrapping fs.ErrNotExist.
func ReadRefFile(dir, name string, env render.BuildEnv) ([]byte, error) {
	_, rel, ok := refSource(name)
	if !ok {
		return nil, fmt.Errorf("values file %q does not name another source ($ref/path)", name)
	}
	rel = env.Expand(rel)
	if u, err := url.Parse(rel); err == nil && u.Scheme != "" {
		return nil, fmt.Errorf("values file %q: a path in the source is expected, not a URL", name)
	}
	clean, err := relPath(rel)
	if err != nil {
		return nil, fmt.Errorf("values file %q: %w", name, err)
	}
	t, err := openTree(dir)
	if err != nil {
		return nil, fmt.Errorf("values file %q: %w", name, err)
	}
	defer t.close()
	resolved, err := t.resolve(filepath.ToSlash(clean))
	if err != nil {
		return nil, fmt.Errorf("values file %q: %w", name, err)
	}
	data, err := t.readFile(resolved, MaxValuesFileSize)
	if err != nil {
		return nil, fmt.Errorf("values file %q: %w", name, err)
	}
	return data, nil
}

// RemoteValueFile reports whether value file name, as a source names it,
// is at a URL (a scheme and "://", after the build environment is
// expanded, as in Argo CD), and returns the expanded URL. Whether it may
// be fetched is the fetcher's to judge (helm.valuesFileSchemes).
func RemoteValueFile(name string, env render.BuildEnv) (string, bool) {
	if _, _, ok := refSource(name); ok {
		return "", false
	}
	expanded := env.Expand(name)
	u, err := url.Parse(expanded)
	if err != nil || u.Scheme == "" || !strings.Contains(expanded, "://") {
		return "", false
	}
	return expanded, true
}

// RemoteValueFiles returns the value files of src at a URL: the names as
// src writes them, with the URLs they expand to.
func RemoteValueFiles(src v1alpha1.ApplicationSource, env render.BuildEnv) map[string]string {
	if src.Helm == nil {
		return nil
	}
	var out map[string]string
	for _, vf := range src.Helm.ValueFiles {
		if u, ok := RemoteValueFile(vf, env); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[vf] = u
		}
	}
	return out
}

// readAppFile reads a values file or file parameter named relative to the
// application directory. URLs and $ref paths are refused (the caller
// fetches those);
// absolute paths, ".." that climbs out of the repository and symlinks that
// point out of it fail with render.ErrOutsideRoot.
func readAppFile(t *tree, appDir, name string) ([]byte, error) {
	if strings.HasPrefix(name, "$") {
		return nil, errors.New("$ref value sources (multi-source applications) are not supported")
	}
	if u, err := url.Parse(name); err == nil && u.Scheme != "" && u.Host != "" {
		return nil, errors.New("a path in the repository is expected, not a URL")
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
	return t.readFile(resolved, MaxValuesFileSize)
}

// MergeValues merges b into a copy of a: nested maps merge, anything else
// in b replaces what a holds, like Helm's values-file merge. Either may
// be nil; the result never is.
func MergeValues(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = MergeValues(am, vm)
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
