package project

import (
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestAppNamespaceAllowed(t *testing.T) {
	tests := []struct {
		name      string
		sources   []string
		namespace string
		want      string
	}{
		{"controller namespace always", nil, "graphcd", ""},
		{"no namespace yet", nil, "", ""},
		{"others need a listing", nil, "team-b",
			"application namespace 'team-b' is not permitted in project 'team-a' (not in sourceNamespaces)"},
		{"exact", []string{"team-a-apps"}, "team-a-apps", ""},
		{"glob", []string{"team-a-*"}, "team-a-dev", ""},
		{"glob miss", []string{"team-a-*"}, "team-b-dev", "~not in sourceNamespaces"},
		{"star", []string{"*"}, "anything", ""},
		{"regular expression", []string{"/^team-[0-9]+$/"}, "team-42", ""},
		{"anchored regular expression miss", []string{"/^team-[0-9]+$/"}, "team-42-x", "~not permitted"},
		{"unanchored regular expression matches inside", []string{"/apps/"}, "team-apps-dev", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := v1alpha1.AppProjectSpec{SourceNamespaces: tt.sources}
			checkDecision(t, mustCompile(t, spec).AppNamespaceAllowed(tt.namespace, "graphcd"), tt.want)
			err := AppNamespaceAllowed(newProject(spec), tt.namespace, "graphcd")
			if (err == nil) != (tt.want == "") {
				t.Errorf("AppNamespaceAllowed = %v, Rules disagrees", err)
			}
		})
	}
}
