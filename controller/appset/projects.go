package appset

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// maxGeneratorDepth bounds how deep SetProjects looks into a set's
// generators (as JSON: matrices and merges nest); a set nested deeper
// counts as templated (the controller refuses it anyway).
const maxGeneratorDepth = 64

// SetProjects returns the projects the Applications of set may be
// generated in, as written: the template's (DefaultProject when empty),
// then, sorted, any other that a generator's own template names (the
// "template" of any generator, at any depth of matrices and merges, so
// that generators added later count too). templated is true when that is
// not known before generating: a project with a placeholder ("{{"), or a
// templatePatch, which may set any project. The API asks for a right on
// every project a set names, and on every project at all when it is
// templated.
func SetProjects(set *v1alpha1.ApplicationSet) (projects []string, templated bool) {
	seen := map[string]bool{}
	add := func(p string) {
		if strings.Contains(p, "{{") {
			templated = true
		}
		if !seen[p] {
			seen[p] = true
			projects = append(projects, p)
		}
	}
	add(set.ProjectName())
	if set.Spec.TemplatePatch != nil && strings.TrimSpace(*set.Spec.TemplatePatch) != "" {
		templated = true
	}
	raw, err := json.Marshal(set.Spec.Generators)
	var gens any
	if err == nil {
		err = json.Unmarshal(raw, &gens)
	}
	if err != nil {
		return projects, true
	}
	if !generatorProjects(gens, 0, add) {
		templated = true
	}
	slices.Sort(projects[1:])
	return projects, templated
}

// generatorProjects calls add with the spec.project of every generator
// template in v, a set's generators as decoded JSON. Parameters (a list's
// elements, values) are not templates. It reports false when v nests
// deeper than maxGeneratorDepth.
func generatorProjects(v any, depth int, add func(string)) bool {
	if depth > maxGeneratorDepth {
		return false
	}
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if !generatorProjects(e, depth+1, add) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			switch k {
			case "elements", "elementsYaml", "values":
				continue
			case "template":
				t, _ := e.(map[string]any)
				spec, _ := t["spec"].(map[string]any)
				if p, _ := spec["project"].(string); p != "" {
					add(p)
				}
				continue
			}
			if !generatorProjects(e, depth+1, add) {
				return false
			}
		}
	}
	return true
}
