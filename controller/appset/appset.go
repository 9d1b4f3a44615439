// Package appset generates the Applications of an ApplicationSet: its
// generators' parameter sets (list, clusters, git, matrix and merge so
// far), each rendered into the set's template (Argo CD's "{{param}}"
// placeholders, or Go templates with Sprig's functions under goTemplate,
// then templatePatch). A template error fails only its own element, reported
// with the parameters that produced it; the others are generated.
//
// Every input is the set author's: parameter sets are bounded
// (MaxParams, a matrix included), rendered text is bounded, Sprig's
// functions that read the environment or the network are left out and
// those that build without bound are bounded.
package appset

import (
	"encoding/json"
	"fmt"
	"text/template"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Result is one generated Application, or why its element failed.
type Result struct {
	// Generator is the index of the set's generator that produced it.
	Generator int
	// Params are the parameters that rendered it.
	Params map[string]any
	// App is the rendered Application; nil when Err is set.
	App *v1alpha1.Application
	// Err says why this element generated nothing.
	Err error
}

// setRun is one generation of a set.
type setRun struct {
	set     *v1alpha1.ApplicationSet
	r       renderer
	sources Sources
}

// Generate renders the Applications of set, in generator order. It fails
// as a whole only when a generator cannot run (an unsupported one, bad
// elements, too many parameter sets); a template error or an invalid or
// duplicate name fails that element alone. sources give what generators
// read outside the set (the clusters); nil has none.
func Generate(set *v1alpha1.ApplicationSet, sources Sources) ([]Result, error) {
	s := &setRun{set: set, r: renderer{goTemplate: set.Spec.GoTemplate, options: set.Spec.GoTemplateOptions, parsed: map[string]*template.Template{}}, sources: sources}
	if len(set.Spec.Generators) == 0 {
		return nil, fmt.Errorf("ApplicationSet %s has no generators", set.Name)
	}
	var out []Result
	total := 0
	for i, g := range set.Spec.Generators {
		sets, err := s.generate(topLevel(g), 0)
		if err != nil {
			return nil, fmt.Errorf("generator %d (%s): %w", i, describe(g), err)
		}
		if total += len(sets); total > MaxParams {
			return nil, fmt.Errorf("more than %d parameter sets", MaxParams)
		}
		for _, p := range sets {
			app, err := s.render(p)
			out = append(out, Result{Generator: i, Params: p.params, App: app, Err: err})
		}
	}
	seen := map[string]int{}
	for i, r := range out {
		if r.App == nil {
			continue
		}
		if first, dup := seen[r.App.Name]; dup {
			out[i].App, out[i].Err = nil, fmt.Errorf("application %q is generated twice (also by element %d)", r.App.Name, first)
			continue
		}
		seen[r.App.Name] = i
	}
	return out, nil
}

// render fills the template (the generator's over the set's) with p and
// applies templatePatch.
func (s *setRun) render(p paramSet) (*v1alpha1.Application, error) {
	tmpl, err := mergedTemplate(s.set.Spec.Template, p.template)
	if err != nil {
		return nil, err
	}
	rendered, err := s.r.value(tmpl, p.params)
	if err != nil {
		return nil, fmt.Errorf("template: %w", err)
	}
	raw, err := json.Marshal(map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(), "kind": "Application",
		"metadata": rendered.(map[string]any)["metadata"], "spec": rendered.(map[string]any)["spec"],
	})
	if err != nil {
		return nil, err
	}
	if s.set.Spec.TemplatePatch != nil {
		patchText, err := s.r.field(*s.set.Spec.TemplatePatch, p.params)
		if err != nil {
			return nil, fmt.Errorf("templatePatch: %w", err)
		}
		patch, err := yaml.YAMLToJSON([]byte(patchText))
		if err != nil {
			return nil, fmt.Errorf("templatePatch: %w", err)
		}
		if raw, err = strategicpatch.StrategicMergePatch(raw, patch, v1alpha1.Application{}); err != nil {
			return nil, fmt.Errorf("templatePatch: %w", err)
		}
	}
	var app v1alpha1.Application
	if err := json.Unmarshal(raw, &app); err != nil {
		return nil, fmt.Errorf("the rendered Application: %w", err)
	}
	if app.Namespace == "" {
		app.Namespace = s.set.Namespace
	}
	// Only graphcd's API records approvals of a held sync: a template
	// cannot forge one (an existing app keeps its own, keptAnnotations).
	delete(app.Annotations, v1alpha1.SyncApprovalsAnnotation)
	if errs := validation.IsDNS1123Subdomain(app.Name); len(errs) > 0 {
		return nil, fmt.Errorf("application name %q: %s", app.Name, errs[0])
	}
	return &app, nil
}

// mergedTemplate is base with the non-empty fields of over on top, as a
// decoded JSON value.
func mergedTemplate(base v1alpha1.ApplicationSetTemplate, over *v1alpha1.ApplicationSetTemplate) (map[string]any, error) {
	out, err := toMap(base)
	if err != nil {
		return nil, err
	}
	if over == nil {
		return out, nil
	}
	top, err := toMap(*over)
	if err != nil {
		return nil, err
	}
	return deepMerge(out, top), nil
}

func toMap(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	return out, json.Unmarshal(raw, &out)
}

// deepMerge puts the non-empty values of b over a: maps merge, other
// values replace.
func deepMerge(a, b map[string]any) map[string]any {
	for k, v := range b {
		switch v := v.(type) {
		case map[string]any:
			if am, ok := a[k].(map[string]any); ok {
				a[k] = deepMerge(am, v)
				continue
			}
			if len(v) == 0 {
				continue
			}
		case string:
			if v == "" {
				continue
			}
		case nil:
			continue
		}
		a[k] = v
	}
	return a
}
