package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// app diff --local and app sync --local read manifests from the local
// disk, as Argo CD's do. The CLI links no renderer (it talks to the API
// only), so it reads plain YAML and JSON; a Kustomize or Helm directory
// is rendered first with its own tool.

// localOptions are the flags that read local manifests.
type localOptions struct {
	path    string
	include []string
}

// defaultLocalInclude are the files --local reads, as Argo CD's
// --local-include.
var defaultLocalInclude = []string{"*.yaml", "*.yml", "*.json"}

// Bounds of what --local reads, below the API's (see the sync mutation's
// manifests): a wrong directory fails fast rather than uploading a tree.
const (
	maxLocalFiles     = 1000
	maxLocalFileBytes = 1 << 20
)

// localObject is one object of the local manifests.
type localObject struct {
	obj  map[string]any
	from string // the file it came from, for messages
}

func (l localObject) str(path ...string) string {
	v, _ := lookupPath(l.obj, path...)
	s, _ := v.(string)
	return s
}

func (l localObject) group() string {
	g, _, ok := strings.Cut(l.str("apiVersion"), "/")
	if !ok {
		return ""
	}
	return g
}

func lookupPath(m map[string]any, path ...string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// readLocal reads the objects of the file or directory path: in a
// directory, every file (in subdirectories too) whose name matches one of
// include. A kind: List is read as its items.
func readLocal(path string, include []string) ([]localObject, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--local: %w", err)
	}
	var files []string
	if !fi.IsDir() {
		files = []string{path}
	} else {
		for _, marker := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml"} {
			if _, err := os.Stat(filepath.Join(path, marker)); err == nil {
				return nil, fmt.Errorf("--local %s holds a %s: the CLI reads plain YAML and JSON only; render it first "+
					"(kustomize build %[1]s > out/all.yaml, or helm template) and give that with --local", path, marker)
			}
		}
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != path && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir // .git and the like
				}
				return nil
			}
			if slices.ContainsFunc(include, func(glob string) bool { ok, _ := filepath.Match(glob, d.Name()); return ok }) {
				files = append(files, p)
			}
			if len(files) > maxLocalFiles {
				return fmt.Errorf("more than %d files", maxLocalFiles)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("--local %s: %w", path, err)
		}
	}
	var out []localObject
	for _, f := range files {
		objs, err := readManifestFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--local %s: no manifests (files matching %s)", path, strings.Join(include, ","))
	}
	return out, nil
}

// readManifestFile reads the objects of one YAML (a stream of documents)
// or JSON file.
func readManifestFile(path string) ([]localObject, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--local: %w", err)
	}
	if fi.Size() > maxLocalFileBytes {
		return nil, fmt.Errorf("--local: %s is larger than %d MiB", path, maxLocalFileBytes>>20)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--local: %w", err)
	}
	var out []localObject
	for i, doc := range splitYAML(raw) {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("--local: %s, document %d: %w", path, i+1, err)
		}
		if len(obj) == 0 {
			continue
		}
		if items, ok := obj["items"].([]any); ok && strings.HasSuffix(fmt.Sprint(obj["kind"]), "List") {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					out = append(out, localObject{obj: m, from: path})
				}
			}
			continue
		}
		l := localObject{obj: obj, from: path}
		if l.str("apiVersion") == "" || l.str("kind") == "" || l.str("metadata", "name") == "" {
			return nil, fmt.Errorf("--local: %s, document %d: want an object with apiVersion, kind and metadata.name", path, i+1)
		}
		out = append(out, l)
	}
	return out, nil
}

// splitYAML splits a YAML stream at its "---" lines.
func splitYAML(raw []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for line := range bytes.Lines(raw) {
		if t := bytes.TrimRight(line, " \t\r\n"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

// localManifests encodes objs for the sync mutation, one JSON object each.
func localManifests(objs []localObject) ([]string, error) {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		raw, err := json.Marshal(o.obj)
		if err != nil {
			return nil, err
		}
		out = append(out, string(raw))
	}
	return out, nil
}

// resourceKey names an object as the diff pairs them.
type resourceKey struct{ group, kind, namespace, name string }

func (k resourceKey) String() string {
	return fmt.Sprintf("%s/%s %s", k.group, k.kind, qualified(k.namespace, k.name))
}

// localDiff is how one object differs between the cluster and the local
// manifests.
type localDiff struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Diff is the unified diff from live to local.
	Diff string `json:"diff"`
}

// diffLocal compares the local objects with the app's live managed
// resources. A local object is compared on the fields it sets (what the
// cluster adds, defaults and status, is not a difference); a live object
// the local manifests lack would be pruned and shows as removed. Secret
// data is not compared: the API masks it.
func diffLocal(app *client.ApplicationLiveApplication, local []localObject) ([]localDiff, error) {
	live := map[resourceKey]string{}
	for _, r := range app.ManagedResources {
		if r.Hook || r.Live == "" {
			continue
		}
		live[resourceKey{r.Group, r.Kind, r.Namespace, r.Name}] = r.Live
	}
	var out []localDiff
	seen := map[resourceKey]bool{}
	for _, l := range local {
		k := resourceKey{l.group(), l.str("kind"), l.str("metadata", "namespace"), l.str("metadata", "name")}
		if k.namespace == "" {
			// Namespaced objects go to the destination namespace; a
			// cluster-scoped one is known by its live twin without one.
			k.namespace = app.Spec.Destination.Namespace
			if _, ok := live[k]; !ok {
				if _, ok := live[resourceKey{k.group, k.kind, "", k.name}]; ok {
					k.namespace = ""
				}
			}
		}
		seen[k] = true
		want := forDiff(l.obj, k.namespace)
		var have any
		if raw, ok := live[k]; ok {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(raw), &obj); err != nil {
				return nil, fmt.Errorf("read the live %s: %w", k, err)
			}
			have = project(forDiff(obj, k.namespace), want)
		}
		if d, err := unifiedDiff(have, want); err != nil {
			return nil, err
		} else if d != "" {
			out = append(out, localDiff{Group: k.group, Kind: k.kind, Namespace: k.namespace, Name: k.name, Diff: d})
		}
	}
	for _, r := range app.ManagedResources {
		k := resourceKey{r.Group, r.Kind, r.Namespace, r.Name}
		raw, ok := live[k]
		if !ok || seen[k] {
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, fmt.Errorf("read the live %s: %w", k, err)
		}
		d, err := unifiedDiff(forDiff(obj, k.namespace), nil)
		if err != nil {
			return nil, err
		}
		out = append(out, localDiff{Group: k.group, Kind: k.kind, Namespace: k.namespace, Name: k.name, Diff: d})
	}
	return out, nil
}

// forDiff is obj without what the cluster owns (status, server-side
// metadata) and without Secret data, with namespace set.
func forDiff(obj map[string]any, namespace string) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "status":
			continue
		case "data", "stringData":
			if obj["kind"] == "Secret" {
				continue
			}
		}
		out[k] = v
	}
	meta := map[string]any{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		for k, v := range m {
			switch k {
			case "name", "labels", "annotations":
				meta[k] = v
			}
		}
	}
	if namespace != "" {
		meta["namespace"] = namespace
	}
	out["metadata"] = meta
	return out
}

// project keeps of live only what want sets: keys of maps, and the
// elements of lists as long as want's, so that fields the cluster fills
// in are not differences.
func project(live, want any) any {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return live
		}
		out := map[string]any{}
		for k, wv := range w {
			if lv, ok := l[k]; ok {
				out[k] = project(lv, wv)
			}
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			return live
		}
		out := make([]any, len(l))
		for i := range l {
			out[i] = project(l[i], w[i])
		}
		return out
	}
	return live
}

// unifiedDiff is the unified diff from live to local as YAML; "" when
// they agree. A nil side is an object that does not exist there.
func unifiedDiff(live, local any) (string, error) {
	if live != nil && local != nil && reflect.DeepEqual(live, local) {
		return "", nil
	}
	lines := func(v any) ([]string, error) {
		if v == nil {
			return nil, nil
		}
		raw, err := yaml.Marshal(v)
		if err != nil {
			return nil, err
		}
		return difflib.SplitLines(string(raw)), nil
	}
	a, err := lines(live)
	if err != nil {
		return "", err
	}
	b, err := lines(local)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: "live", ToFile: "local", Context: 3})
}

// printLocalDiffs prints diffs as app diff prints the server's.
func printLocalDiffs(w io.Writer, format string, diffs []localDiff) error {
	switch format {
	case "json", "yaml":
		if diffs == nil {
			diffs = []localDiff{}
		}
		return printStructured(w, format, diffs)
	case "name":
		for _, d := range diffs {
			if _, err := fmt.Fprintf(w, "%s:%s:%s\n", d.Group, d.Kind, qualified(d.Namespace, d.Name)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, d := range diffs {
		if _, err := fmt.Fprintf(w, "===== %s/%s %s ======\n%s\n", d.Group, d.Kind, qualified(d.Namespace, d.Name), d.Diff); err != nil {
			return err
		}
	}
	return nil
}

func (l *localOptions) addFlags(c *cobra.Command, what string) {
	c.Flags().StringVar(&l.path, "local", "", what+" (plain YAML and JSON; render Kustomize and Helm first)")
	c.Flags().StringSliceVar(&l.include, "local-include", defaultLocalInclude, "with --local, the files of the directory to read (globs)")
}

// read reads the local objects; nil without --local.
func (l *localOptions) read(c *cobra.Command) ([]localObject, error) {
	if l.path == "" {
		if c.Flags().Changed("local-include") {
			return nil, &command.UsageError{Cmd: c, Err: errors.New("--local-include needs --local")}
		}
		return nil, nil
	}
	return readLocal(l.path, l.include)
}
