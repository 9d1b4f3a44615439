package appset

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// repo is a repository tree in memory.
type repo struct{ fstest.MapFS }

func (repo) Revision() string { return "0123abcd" }

// repos serves one repository, and the clusters.
type repos struct {
	fleet
	tree repo
}

func (r repos) GitTree(repoURL, revision string) (Tree, error) {
	if repoURL != "https://git.example.com/apps.git" {
		return nil, errors.New("no such repository")
	}
	return r.tree, nil
}

var appsRepo = repos{fleet: clusters, tree: repo{fstest.MapFS{
	"apps/web/kustomization.yaml":        {Data: []byte("resources: []\n")},
	"apps/api/kustomization.yaml":        {Data: []byte("resources: []\n")},
	"apps/legacy/kustomization.yaml":     {Data: []byte("resources: []\n")},
	"clusters/eu/prod/config.yaml":       {Data: []byte("cluster: {name: prod-eu, address: https://prod.example.com}\n")},
	"clusters/us/dev/config.json":        {Data: []byte(`[{"cluster": {"name": "dev-us", "address": "https://dev.example.com"}}, {"cluster": {"name": "dev-us-2", "address": "https://dev2.example.com"}}]`)},
	"clusters/broken/config.json":        {Data: []byte(`"just a string"`)},
	"clusters/eu/prod/notes.txt":         {Data: []byte("not matched")},
	"apps/web/.git/HEAD":                 {Data: []byte("not walked")},
	"apps/deep/a/b/c/kustomization.yaml": {Data: []byte("{}")},
}}}

// The git directories generator gives each matching directory's path
// parameters, flat or under .path with goTemplate; exclusions apply;
// the files generator gives each file's fields (a list, each element's)
// with the file's path parameters; pathParamPrefix moves them.
func TestGitGenerators(t *testing.T) {
	t.Parallel()
	got, err := Generate(set(t, `
metadata: {name: dirs, namespace: graphcd}
spec:
  generators:
  - git:
      repoURL: https://git.example.com/apps.git
      directories: [{path: 'apps/*'}, {path: apps/legacy, exclude: true}]
  template:
    metadata: {name: '{{path.basename}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: '{{path}}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{path[1]}}'}
`), appsRepo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"api api apps/api", "deep deep apps/deep", "web web apps/web"}; !slices.Equal(summary(got), want) {
		t.Errorf("directories: generated %v, want %v", summary(got), want)
	}

	got, err = Generate(set(t, `
metadata: {name: files, namespace: graphcd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://git.example.com/apps.git
      files: [{path: 'clusters/**/config.*'}, {path: clusters/broken/*, exclude: true}]
      pathParamPrefix: cfg
      values: {region: '{{ index .cfg.path.segments 1 }}'}
  template:
    metadata: {name: '{{ .cluster.name }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: '{{ .cfg.path.path }}/{{ .cfg.path.filename }}'}
      destination: {server: '{{ .cluster.address }}', namespace: '{{ .values.region }}'}
`), appsRepo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"prod-eu eu clusters/eu/prod/config.yaml", "dev-us us clusters/us/dev/config.json", "dev-us-2 us clusters/us/dev/config.json"}; !slices.Equal(summary(got), want) {
		t.Errorf("files: generated %v, want %v", summary(got), want)
	}

	// A file that holds neither an object nor a list fails the
	// generator, naming the file.
	if _, err := Generate(set(t, `
metadata: {name: broken}
spec:
  generators: [{git: {repoURL: https://git.example.com/apps.git, files: [{path: 'clusters/broken/config.json'}]}}]
`+guestbookTemplate), appsRepo); err == nil || !strings.Contains(err.Error(), "clusters/broken/config.json: neither an object nor a list") {
		t.Errorf("a broken config: err = %v", err)
	}
	if _, err := Generate(set(t, `
metadata: {name: nogit}
spec:
  generators: [{git: {repoURL: https://git.example.com/apps.git, directories: [{path: '*'}]}}]
`+guestbookTemplate), clusters); !errors.Is(err, errNoGit) {
		t.Errorf("git without repositories: err = %v", err)
	}
}

func TestMatchGlob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"apps/*", "apps/web", true},
		{"apps/*", "apps/web/x", false},
		{"**/config.json", "config.json", true},
		{"**/config.json", "a/b/c/config.json", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/y/z/c", false},
		{strings.Repeat("**/", 40) + "x", strings.Repeat("d/", 60) + "y", false},
	} {
		if got := matchGlob(tc.pattern, tc.path); got != tc.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}
