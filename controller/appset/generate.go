package appset

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset/scm"
)

// Limits of one ApplicationSet's generation.
const (
	// MaxParams bounds the parameter sets a set generates (a matrix
	// multiplies).
	MaxParams = 10000
	// maxNesting bounds matrices and merges inside each other.
	maxNesting = 3
)

// paramSet is one parameter set, with the template override of the
// generator that produced it.
type paramSet struct {
	params   map[string]any
	template *v1alpha1.ApplicationSetTemplate
}

// generator is any generator, top-level or nested.
type generator struct {
	list                      *v1alpha1.ListGenerator
	clusters                  *v1alpha1.ClusterGenerator
	git                       *v1alpha1.GitGenerator
	decisions                 *v1alpha1.DuckTypeGenerator
	matrix                    *v1alpha1.MatrixGenerator
	merge                     *v1alpha1.MergeGenerator
	plugin, scm, pullRequest  []byte
	selector                  *metav1.LabelSelector
	nestedMatrix, nestedMerge []byte
}

func topLevel(g v1alpha1.ApplicationSetGenerator) generator {
	return generator{list: g.List, clusters: g.Clusters, git: g.Git, decisions: g.ClusterDecisionResource, matrix: g.Matrix, merge: g.Merge, selector: g.Selector,
		plugin: rawOf(g.Plugin), scm: rawOf(g.SCMProvider), pullRequest: rawOf(g.PullRequest)}
}

// rawOf is a schemaless generator's JSON; nil when it is not set.
func rawOf(r *runtime.RawExtension) []byte {
	if r == nil {
		return nil
	}
	if r.Raw == nil {
		return []byte("{}")
	}
	return r.Raw
}

func nested(g v1alpha1.ApplicationSetNestedGenerator) generator {
	out := generator{list: g.List, clusters: g.Clusters, git: g.Git, decisions: g.ClusterDecisionResource, selector: g.Selector,
		plugin: rawOf(g.Plugin), scm: rawOf(g.SCMProvider), pullRequest: rawOf(g.PullRequest)}
	if g.Matrix != nil {
		out.nestedMatrix = g.Matrix.Raw
	}
	if g.Merge != nil {
		out.nestedMerge = g.Merge.Raw
	}
	return out
}

// kinds counts the generators g sets.
func (g generator) kinds() int {
	n := 0
	for _, set := range []bool{g.list != nil, g.clusters != nil, g.git != nil, g.decisions != nil, g.matrix != nil, g.merge != nil,
		g.nestedMatrix != nil, g.nestedMerge != nil, g.plugin != nil, g.scm != nil, g.pullRequest != nil} {
		if set {
			n++
		}
	}
	return n
}

// generate returns g's parameter sets. depth counts enclosing matrices
// and merges.
func (s *setRun) generate(g generator, depth int) ([]paramSet, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("matrix and merge generators nest more than %d deep", maxNesting)
	}
	if n := g.kinds(); n > 1 {
		return nil, fmt.Errorf("one generator entry sets %d generators; give each its own entry", n)
	}
	var out []paramSet
	var err error
	switch {
	case g.list != nil:
		out, err = s.list(g.list)
	case g.clusters != nil:
		out, err = s.clusters(g.clusters)
	case g.git != nil:
		out, err = s.git(g.git)
	case g.decisions != nil:
		out, err = s.duckType(g.decisions)
	case g.plugin != nil:
		out, err = s.plugin(g.plugin)
	case g.scm != nil:
		out, err = s.forge("scmProvider", g.scm, scm.SCMProvider)
	case g.pullRequest != nil:
		out, err = s.forge("pullRequest", g.pullRequest, scm.PullRequests)
	case g.matrix != nil:
		out, err = s.matrix(g.matrix, depth)
	case g.merge != nil:
		out, err = s.merge(g.merge, depth)
	case g.nestedMatrix != nil:
		var m v1alpha1.MatrixGenerator
		if err := json.Unmarshal(g.nestedMatrix, &m); err != nil {
			return nil, fmt.Errorf("matrix: %w", err)
		}
		out, err = s.matrix(&m, depth)
	case g.nestedMerge != nil:
		var m v1alpha1.MergeGenerator
		if err := json.Unmarshal(g.nestedMerge, &m); err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		out, err = s.merge(&m, depth)
	default:
		return nil, errors.New("a generator sets none of list, matrix, merge, clusters, git, scmProvider, clusterDecisionResource, pullRequest, plugin")
	}
	if err != nil {
		return nil, err
	}
	return filter(out, g.selector)
}

// list returns one parameter set per element: its fields.
func (s *setRun) list(l *v1alpha1.ListGenerator) ([]paramSet, error) {
	var elements []map[string]any
	for i, e := range l.Elements {
		var m map[string]any
		if err := json.Unmarshal(e.Raw, &m); err != nil {
			return nil, fmt.Errorf("list: element %d is not an object: %w", i, err)
		}
		elements = append(elements, m)
	}
	if l.ElementsYaml != "" {
		var more []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &more); err != nil {
			return nil, fmt.Errorf("list: elementsYaml: %w", err)
		}
		elements = append(elements, more...)
	}
	if len(elements) > MaxParams {
		return nil, fmt.Errorf("list: %d elements, more than %d", len(elements), MaxParams)
	}
	out := make([]paramSet, len(elements))
	for i, e := range elements {
		if e == nil {
			e = map[string]any{}
		}
		out[i] = paramSet{params: e, template: l.Template}
	}
	return out, nil
}

// matrix combines every set of the first generator with every set of
// the second, rendered with the first's parameters (so a list's
// elementsYaml may be built from them).
func (s *setRun) matrix(m *v1alpha1.MatrixGenerator, depth int) ([]paramSet, error) {
	if len(m.Generators) != 2 {
		return nil, fmt.Errorf("matrix: %d generators, want exactly 2", len(m.Generators))
	}
	first, err := s.generate(nested(m.Generators[0]), depth+1)
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	var out []paramSet
	for _, a := range first {
		second, err := s.nestedWith(m.Generators[1], a.params)
		if err != nil {
			return nil, fmt.Errorf("matrix: %w", err)
		}
		g := nested(second)
		bs, err := s.generate(g, depth+1)
		if err != nil {
			return nil, fmt.Errorf("matrix: %w", err)
		}
		if len(out)+len(bs) > MaxParams {
			return nil, fmt.Errorf("matrix: more than %d parameter sets", MaxParams)
		}
		for _, b := range bs {
			params := cloneParams(a.params)
			for k, v := range b.params {
				params[k] = v
			}
			out = append(out, paramSet{params: params, template: firstTemplate(m.Template, b.template, a.template)})
		}
	}
	return out, nil
}

// nestedWith renders the strings of generator g with params (a matrix's
// second generator may use its first's parameters).
func (s *setRun) nestedWith(g v1alpha1.ApplicationSetNestedGenerator, params map[string]any) (v1alpha1.ApplicationSetNestedGenerator, error) {
	raw, err := json.Marshal(g)
	if err != nil {
		return g, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return g, err
	}
	rendered, err := s.r.value(v, params)
	if err != nil {
		return g, err
	}
	if raw, err = json.Marshal(rendered); err != nil {
		return g, err
	}
	var out v1alpha1.ApplicationSetNestedGenerator
	return out, json.Unmarshal(raw, &out)
}

// merge merges the sets of each later generator into the first's: a set
// whose mergeKeys values equal a base set's overrides its parameters.
func (s *setRun) merge(m *v1alpha1.MergeGenerator, depth int) ([]paramSet, error) {
	if len(m.Generators) < 2 {
		return nil, fmt.Errorf("merge: %d generators, want at least 2", len(m.Generators))
	}
	if len(m.MergeKeys) == 0 {
		return nil, errors.New("merge: no mergeKeys")
	}
	base, err := s.generate(nested(m.Generators[0]), depth+1)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	for _, g := range m.Generators[1:] {
		more, err := s.generate(nested(g), depth+1)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		byKey := map[string]map[string]any{}
		for _, p := range more {
			if k, ok := mergeKey(p.params, m.MergeKeys); ok {
				byKey[k] = p.params
			}
		}
		for i, b := range base {
			k, ok := mergeKey(b.params, m.MergeKeys)
			if !ok {
				continue
			}
			if over, found := byKey[k]; found {
				params := cloneParams(b.params)
				for name, v := range over {
					params[name] = v
				}
				base[i].params = params
			}
		}
	}
	for i := range base {
		base[i].template = firstTemplate(m.Template, base[i].template)
	}
	return base, nil
}

// mergeKey is the values of keys in params (by dotted name), or false
// when one is missing.
func mergeKey(params map[string]any, keys []string) (string, bool) {
	flat := flatten(params)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v, ok := flat[k]
		if !ok {
			return "", false
		}
		parts[i] = v
	}
	b, _ := json.Marshal(parts)
	return string(b), true
}

// filter keeps the sets whose string parameters match selector.
func filter(sets []paramSet, selector *metav1.LabelSelector) ([]paramSet, error) {
	if selector == nil {
		return sets, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("selector: %w", err)
	}
	var out []paramSet
	for _, p := range sets {
		if sel.Matches(labels.Set(flatten(p.params))) {
			out = append(out, p)
		}
	}
	return out, nil
}

func cloneParams(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, v := range p {
		out[k] = v
	}
	return out
}

func firstTemplate(ts ...*v1alpha1.ApplicationSetTemplate) *v1alpha1.ApplicationSetTemplate {
	for _, t := range ts {
		if t != nil {
			return t
		}
	}
	return nil
}

// describe names a generator for messages: "list", "matrix".
func describe(g v1alpha1.ApplicationSetGenerator) string {
	switch {
	case g.List != nil:
		return "list"
	case g.Clusters != nil:
		return "clusters"
	case g.Git != nil:
		return "git"
	case g.Matrix != nil:
		return "matrix"
	case g.Merge != nil:
		return "merge"
	case g.ClusterDecisionResource != nil:
		return "clusterDecisionResource"
	case g.Plugin != nil:
		return "plugin"
	case g.SCMProvider != nil:
		return "scmProvider"
	case g.PullRequest != nil:
		return "pullRequest"
	}
	return "empty"
}
