package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/client"
)

func TestYAMLDocuments(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []string
	}{
		{"one", "kind: ApplicationSet\n", []string{"kind: ApplicationSet\n"}},
		{"json", `{"kind": "ApplicationSet"}`, []string{`{"kind": "ApplicationSet"}`}},
		{"two, markers and comments", "# sets\n---\nkind: A\n---\n# nothing\n---\nkind: B\n", []string{"kind: A\n", "kind: B\n"}},
		{"a marker with content", "--- {kind: A}\n--- # c\nkind: B\n", []string{"{kind: A}\n", "kind: B\n"}},
		{"markers only inside a block scalar are not markers", "kind: A\nspec:\n  templatePatch: |\n    ---\n    x: y\n", []string{"kind: A\nspec:\n  templatePatch: |\n    ---\n    x: y\n"}},
		{"---- is not a marker", "a: 1\n----\n", []string{"a: 1\n----\n"}},
		{"empty", "\n# only a comment\n---\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(yamlDocuments(tt.stream), tt.want); d != "" {
				t.Errorf("yamlDocuments (-got +want):\n%s", d)
			}
		})
	}
}

func TestGeneratorKinds(t *testing.T) {
	got := generatorKinds(`[{"list":{"elements":[]}},{"clusters":{},"selector":{"matchLabels":{"a":"b"}}},{"matrix":{"generators":[]}}]`)
	if d := cmp.Diff(got, []string{"list", "clusters", "matrix"}); d != "" {
		t.Errorf("generatorKinds (-got +want):\n%s", d)
	}
	if got := generatorKinds("not json"); got != nil {
		t.Errorf("generatorKinds of bad JSON = %v", got)
	}
}

func TestConditionsOf(t *testing.T) {
	type cond = client.AppSetSummaryStatusApplicationSetStatusConditionsApplicationSetCondition
	healthy := []cond{{Type: "ErrorOccurred", Status: "False"}, {Type: "ParametersGenerated", Status: "True"}, {Type: "ResourcesUpToDate", Status: "True"}}
	if got := conditionsOf(healthy); got != "" {
		t.Errorf("conditions of a healthy set = %q, want none", got)
	}
	failing := []cond{{Type: "ErrorOccurred", Status: "True"}, {Type: "ParametersGenerated", Status: "True"}, {Type: "ResourcesUpToDate", Status: "False"}}
	if got := conditionsOf(failing); got != "ErrorOccurred,ResourcesUpToDate" {
		t.Errorf("conditions of a failing set = %q", got)
	}
}
