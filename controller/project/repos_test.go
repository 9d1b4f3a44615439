package project

import (
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestSourceAllowed(t *testing.T) {
	const refused = "application repo %s is not permitted in project 'team-a'"
	tests := []struct {
		name  string
		repos []string
		url   string
		want  string // "" allowed; else the message, or "~substring"
	}{
		{"star allows https", []string{"*"}, "https://github.com/org/repo.git", ""},
		{"star allows scp ssh", []string{"*"}, "git@github.com:org/repo.git", ""},
		{"no repos allows nothing", nil, "https://github.com/org/repo", strings.Replace(refused, "%s", "https://github.com/org/repo", 1)},
		{"exact", []string{"https://github.com/org/repo.git"}, "https://github.com/org/repo.git", ""},
		{"exact ignores .git", []string{"https://github.com/org/repo.git"}, "https://github.com/org/repo", ""},
		{"exact ignores trailing slash", []string{"https://github.com/org/repo"}, "https://github.com/org/repo/", ""},
		{"exact ignores case", []string{"https://GitHub.com/Org/Repo"}, "https://github.com/org/repo.git", ""},
		{"other repo refused", []string{"https://github.com/org/repo"}, "https://github.com/org/other",
			strings.Replace(refused, "%s", "https://github.com/org/other", 1)},
		{"star stops at slash", []string{"https://github.com/org/*"}, "https://github.com/org/team/repo",
			strings.Replace(refused, "%s", "https://github.com/org/team/repo", 1)},
		{"star within a segment", []string{"https://github.com/org/*"}, "https://github.com/org/repo.git", ""},
		{"double star crosses slashes", []string{"https://github.com/org/**"}, "https://github.com/org/team/repo.git", ""},
		{"question mark", []string{"https://github.com/org/app-?"}, "https://github.com/org/app-b", ""},
		{"class", []string{"https://github.com/team-[ab]/*"}, "https://github.com/team-c/x", "~is not permitted"},
		{"alternatives", []string{"https://{github,gitlab}.com/org/*"}, "https://gitlab.com/org/x", ""},
		{"ssh spellings are one", []string{"ssh://git@github.com/org/*"}, "git@github.com:org/repo.git", ""},
		{"scp pattern", []string{"git@github.com:org/*"}, "ssh://git@github.com/org/repo", ""},
		{"https and ssh differ", []string{"https://github.com/org/*"}, "git@github.com:org/repo", "~is not permitted"},
		{"helm repository", []string{"https://charts.example.com"}, "https://charts.example.com/", ""},
		{"oci repository", []string{"oci://registry.example.com/charts/*"}, "oci://registry.example.com/charts/app", ""},
		{"other oci repository refused", []string{"oci://registry.example.com/team/*"}, "oci://registry.example.com/other/app", "~is not permitted"},
		{"oci and https differ", []string{"https://registry.example.com/team/*"}, "oci://registry.example.com/team/app", "~is not permitted"},
		{"negation denies", []string{"!https://gitlab.com/group/**", "*"}, "https://gitlab.com/group/sub/repo",
			"application repo https://gitlab.com/group/sub/repo is not permitted in project 'team-a' (denied by sourceRepos entry '!https://gitlab.com/group/**')"},
		{"negation lets others through", []string{"!https://gitlab.com/group/**", "*"}, "https://gitlab.com/other/repo", ""},
		{"negation order does not matter", []string{"*", "!https://gitlab.com/group/**"}, "https://gitlab.com/group/repo", "~denied by sourceRepos entry"},
		{"negation alone allows nothing", []string{"!https://gitlab.com/group/**"}, "https://github.com/org/repo", "~is not permitted"},
		{"negation normalised too", []string{"!https://GitLab.com/Group/Repo.git", "*"}, "https://gitlab.com/group/repo", "~denied by sourceRepos entry"},
		{"credentials are not shown", []string{"https://github.com/org/repo"}, "https://bot:s3cret@github.com/org/other",
			"application repo https://bot:***@github.com/org/other is not permitted in project 'team-a'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustCompile(t, v1alpha1.AppProjectSpec{SourceRepos: tt.repos})
			checkDecision(t, r.SourceAllowed(tt.url), tt.want)
			// The package-level function agrees.
			err := SourceAllowed(newProject(v1alpha1.AppProjectSpec{SourceRepos: tt.repos}), tt.url)
			if (err == nil) != (tt.want == "") {
				t.Errorf("SourceAllowed = %v, Rules.SourceAllowed disagrees", err)
			}
		})
	}
}
