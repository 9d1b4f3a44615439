package appset

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/graphcd/graphcd/reposerver/gittree"
)

// repos serves one repository, in memory, and the clusters.
type repos struct {
	fleet
	tree fstest.MapFS
}

func (r repos) GitMatch(repoURL, _ string, req gittree.Request) (*gittree.Result, error) {
	if repoURL != "https://git.example.com/apps.git" {
		return nil, errors.New("no such repository")
	}
	return gittree.Match(r.tree, req)
}

var appsRepo = repos{fleet: clusters, tree: fstest.MapFS{
	"apps/web/kustomization.yaml":        {Data: []byte("resources: []\n")},
	"apps/api/kustomization.yaml":        {Data: []byte("resources: []\n")},
	"apps/legacy/kustomization.yaml":     {Data: []byte("resources: []\n")},
	"clusters/eu/prod/config.yaml":       {Data: []byte("cluster: {name: prod-eu, address: https://prod.example.com}\n")},
	"clusters/us/dev/config.json":        {Data: []byte(`[{"cluster": {"name": "dev-us", "address": "https://dev.example.com"}}, {"cluster": {"name": "dev-us-2", "address": "https://dev2.example.com"}}]`)},
	"clusters/broken/config.json":        {Data: []byte(`"just a string"`)},
	"clusters/eu/prod/notes.txt":         {Data: []byte("not matched")},
	"apps/web/.git/HEAD":                 {Data: []byte("not walked")},
	"apps/deep/a/b/c/kustomization.yaml": {Data: []byte("{}")},
}}

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
