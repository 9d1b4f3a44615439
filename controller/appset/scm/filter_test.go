package scm

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRepoFilters: one filter's conditions must all hold; one filter of
// several passing is enough.
func TestRepoFilters(t *testing.T) {
	f := githubForge(t)
	for _, tc := range []struct {
		name    string
		filters []obj
		want    []string
	}{
		{name: "none", want: []string{"svc-a", "web"}},
		{name: "repository", filters: []obj{{"repositoryMatch": "^svc-"}}, want: []string{"svc-a"}},
		{name: "label", filters: []obj{{"labelMatch": "^team-a$"}}, want: []string{"svc-a"}},
		{name: "AND within a filter", filters: []obj{{"repositoryMatch": "^svc-", "labelMatch": "^team-b$"}}},
		{name: "OR across filters", filters: []obj{{"repositoryMatch": "^nothing$"}, {"labelMatch": "^deploy$"}}, want: []string{"svc-a"}},
		{name: "path exists", filters: []obj{{"pathsExist": []string{"deploy/kustomization.yaml"}}}, want: []string{"svc-a"}},
		{name: "path does not exist", filters: []obj{{"pathsDoNotExist": []string{"/deploy/kustomization.yaml"}}}, want: []string{"web"}},
		{name: "directory and branch", filters: []obj{{"pathsExist": []string{"deploy"}, "branchMatch": "^release/"}}, want: []string{"web"}},
		{name: "branch or path", filters: []obj{{"branchMatch": "^main$"}, {"pathsExist": []string{"deploy"}}}, want: []string{"svc-a", "web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := spec(t, obj{"github": obj{"organization": "acme", "api": f.URL}, "filters": tc.filters})
			res, err := SCMProvider(t.Context(), raw, false, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range res.Params {
				got = append(got, p["repository"].(string))
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("repositories (-got +want):\n%s", diff)
			}
		})
	}
}
