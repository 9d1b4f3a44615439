package appset

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// set decodes an ApplicationSet manifest.
func set(t testing.TB, manifest string) *v1alpha1.ApplicationSet {
	t.Helper()
	var s v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// summary is "name dest-namespace path" per result, or "error: ..." .
func summary(results []Result) []string {
	var out []string
	for _, r := range results {
		if r.Err != nil {
			out = append(out, "error: "+r.Err.Error())
			continue
		}
		path := ""
		if r.App.Spec.Source != nil {
			path = r.App.Spec.Source.Path
		}
		out = append(out, r.App.Name+" "+r.App.Spec.Destination.Namespace+" "+path)
	}
	return out
}

const guestbookTemplate = `
  template:
    metadata:
      name: '{{cluster}}-guestbook'
      labels: {env: '{{env}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, targetRevision: main, path: 'guestbook/{{env}}'}
      destination: {server: '{{url}}', namespace: guestbook}
`

func TestListWithPlaceholders(t *testing.T) {
	t.Parallel()
	s := set(t, `
metadata: {name: guestbook, namespace: graphcd}
spec:
  generators:
  - list:
      elements:
      - {cluster: engineering-dev, url: https://1.2.3.4, env: dev}
      - {cluster: engineering-prod, url: https://2.4.6.8, env: prod}
`+guestbookTemplate)
	got, err := Generate(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"engineering-dev-guestbook guestbook guestbook/dev", "engineering-prod-guestbook guestbook guestbook/prod"}; !slices.Equal(summary(got), want) {
		t.Errorf("generated %v, want %v", summary(got), want)
	}
	app := got[1].App
	if app.Namespace != "graphcd" || app.Labels["env"] != "prod" || app.Spec.Destination.Server != "https://2.4.6.8" || app.Kind != "Application" {
		t.Errorf("second app: %+v", app)
	}
}

// Go templates with Sprig's functions; missingkey=error fails only the
// element that lacks the key, naming it; the others are generated.
func TestGoTemplateElementErrors(t *testing.T) {
	t.Parallel()
	s := set(t, `
metadata: {name: shops, namespace: graphcd}
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
  - list:
      elements:
      - {name: Alpha Shop, region: eu}
      - {name: beta}
      - {name: gamma, region: us}
  template:
    metadata: {name: '{{ .name | normalize }}-{{ .region | upper | lower }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: '{{ printf "shops/%s" (.name | slugify) }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .region }}'}
`)
	got, err := Generate(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := summary(got)
	if len(sum) != 3 || sum[0] != "alpha-shop-eu eu shops/alpha-shop" || sum[2] != "gamma-us us shops/gamma" {
		t.Errorf("generated %v", sum)
	}
	if !strings.HasPrefix(sum[1], "error: template: metadata: name:") || !strings.Contains(sum[1], `map has no entry for key "region"`) {
		t.Errorf("the element without region: %q, want its template error", sum[1])
	}
	if got[1].Params["name"] != "beta" {
		t.Errorf("the failed element's parameters: %v", got[1].Params)
	}
}

// A matrix's second generator may be built from the first's parameters;
// a merge overrides by key; selectors filter; a generator's template
// overrides the set's.
func TestMatrixMergeSelector(t *testing.T) {
	t.Parallel()
	s := set(t, `
metadata: {name: fleet, namespace: graphcd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - list:
          elements:
          - {cluster: a, apps: [web, api]}
          - {cluster: b, apps: [web]}
      - list:
          elementsYaml: '{{ range .apps }}- app: {{ . }}{{ "\n" }}{{ end }}'
  - merge:
      mergeKeys: [cluster]
      generators:
      - list:
          elements:
          - {cluster: c, app: web, replicas: "1"}
          - {cluster: d, app: web, replicas: "1"}
      - list:
          elements:
          - {cluster: d, replicas: "3"}
    selector:
      matchLabels: {replicas: "3"}
  - list:
      elements: [{cluster: e, app: docs}]
      template:
        metadata: {}
        spec:
          source: {repoURL: https://git.example.com/docs.git, path: 'site'}
  template:
    metadata: {name: '{{ .cluster }}-{{ .app }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: '{{ .app }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .cluster }}'}
`)
	got, err := Generate(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a-web a web", "a-api a api", "b-web b web", "d-web d web", "e-docs e site"}
	if !slices.Equal(summary(got), want) {
		t.Errorf("generated %v, want %v", summary(got), want)
	}
	if r := got[3].Params["replicas"]; r != "3" {
		t.Errorf("merged replicas = %v, want 3", r)
	}
	if got[4].App.Spec.Source.RepoURL != "https://git.example.com/docs.git" {
		t.Errorf("the list's template override: %+v", got[4].App.Spec.Source)
	}
}

// templatePatch reaches fields a string cannot (a boolean), rendered
// with the element's parameters.
func TestTemplatePatch(t *testing.T) {
	t.Parallel()
	s := set(t, `
metadata: {name: patched, namespace: graphcd}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{name: auto, prune: true}, {name: manual, prune: false}]
  template:
    metadata: {name: '{{ .name }}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: x}
      destination: {server: https://kubernetes.default.svc, namespace: x}
  templatePatch: |
    {{- if .prune }}
    spec:
      syncPolicy:
        automated: {prune: true}
    {{- end }}
`)
	got, err := Generate(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a := got[0].App.Spec.SyncPolicy; a == nil || a.Automated == nil || !a.Automated.Prune {
		t.Errorf("auto: syncPolicy %+v, want automated prune", a)
	}
	if got[1].App.Spec.SyncPolicy != nil {
		t.Errorf("manual: syncPolicy %+v, want none", got[1].App.Spec.SyncPolicy)
	}
}

// What a hostile set meets: a generator without its sources and a matrix that
// multiplies past the limit fail the set; a repeat bomb, an invalid name
// and a duplicate name fail their elements.
func TestHostileSets(t *testing.T) {
	t.Parallel()
	if _, err := Generate(set(t, `
metadata: {name: scm}
spec:
  generators: [{scmProvider: {github: {organization: example}}}]
`+guestbookTemplate), nil); !errors.Is(err, errNoForges) || !strings.Contains(err.Error(), "generator 0 (scmProvider)") {
		t.Errorf("scmProvider generator: err = %v", err)
	}
	if _, err := Generate(set(t, `
metadata: {name: two}
spec:
  generators: [{list: {elements: [{a: b}]}, clusters: {}}]
`+guestbookTemplate), clusters); err == nil || !strings.Contains(err.Error(), "sets 2 generators") {
		t.Errorf("two generators in one entry: err = %v", err)
	}
	var elems strings.Builder
	for i := range 200 {
		elems.WriteString("{n: '" + strings.Repeat("x", i%7+1) + "'},")
	}
	bomb := `
metadata: {name: bomb}
spec:
  generators:
  - matrix:
      generators:
      - list: {elements: [` + elems.String() + `]}
      - list: {elements: [` + elems.String() + `]}
` + guestbookTemplate
	if _, err := Generate(set(t, bomb), nil); err == nil || !strings.Contains(err.Error(), "more than 10000 parameter sets") {
		t.Errorf("200 × 200 matrix: err = %v", err)
	}

	got, err := Generate(set(t, `
metadata: {name: bad, namespace: graphcd}
spec:
  goTemplate: true
  generators:
  - list:
      elements: [{name: ok}, {name: big}, {name: Not_A_Name}, {name: ok}]
  template:
    metadata: {name: '{{ if eq .name "big" }}{{ repeat 100000000 "x" }}{{ else }}{{ .name }}{{ end }}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := summary(got)
	if sum[0] != "ok  " || !strings.Contains(sum[1], "template output too large") ||
		!strings.Contains(sum[2], `application name "Not_A_Name"`) || !strings.Contains(sum[3], `"ok" is generated twice (also by element 0)`) {
		t.Errorf("generated %q", sum)
	}
}

// fleet is a fixed cluster list.
type fleet []Cluster

func (f fleet) Clusters() ([]Cluster, error) { return f, nil }

var clusters = fleet{
	{Name: "in-cluster", Server: "https://kubernetes.default.svc"},
	{Name: "prod", Server: "https://prod.example.com", Project: "team", Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{
		"owner": "sre", "kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"config":"{\"bearerToken\":\"s3cret\"}"}}`,
	}},
	{Name: "Staging_EU", Server: "https://staging.example.com", Labels: map[string]string{"env": "staging"}},
}

// The clusters generator gives each matching cluster's name (and its
// normalized form), server, project, labels, annotations and templated
// values; with flatList, one set listing them; in a matrix, each cluster
// times each element.
func TestClustersGenerator(t *testing.T) {
	t.Parallel()
	got, err := Generate(set(t, `
metadata: {name: addons, namespace: graphcd}
spec:
  generators:
  - clusters:
      selector:
        matchExpressions: [{key: env, operator: In, values: [prod, staging]}]
      values: {revision: '{{metadata.labels.env}}-main'}
  template:
    metadata: {name: 'addons-{{nameNormalized}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/addons.git, targetRevision: '{{values.revision}}', path: '{{metadata.annotations.owner}}'}
      destination: {server: '{{server}}', namespace: addons}
`), clusters)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"addons-prod addons sre", "addons-staging-eu addons {{metadata.annotations.owner}}"}; !slices.Equal(summary(got), want) {
		t.Errorf("generated %v, want %v", summary(got), want)
	}
	if got[0].App.Spec.Source.TargetRevision != "prod-main" || got[0].App.Spec.Destination.Server != "https://prod.example.com" {
		t.Errorf("prod: %+v", got[0].App.Spec)
	}
	// kubectl's last-applied copy of a cluster Secret holds its
	// credentials: it is no parameter (parameters reach the status).
	if params, _ := json.Marshal(got[0].Params); strings.Contains(string(params), "s3cret") {
		t.Errorf("the parameters carry the Secret's last-applied copy: %s", params)
	}

	got, err = Generate(set(t, `
metadata: {name: matrix, namespace: graphcd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - clusters: {}
      - list: {elements: [{app: web}, {app: api}]}
  - clusters: {flatList: true}
    selector: {}
  template:
    metadata: {name: '{{ if .clusters }}all-{{ len .clusters }}{{ else }}{{ .nameNormalized }}-{{ .app }}{{ end }}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc}
`), clusters)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		if r.Err != nil {
			t.Fatalf("element: %v", r.Err)
		}
		names = append(names, r.App.Name)
	}
	if want := []string{"in-cluster-web", "in-cluster-api", "prod-web", "prod-api", "staging-eu-web", "staging-eu-api", "all-3"}; !slices.Equal(names, want) {
		t.Errorf("generated %v, want %v", names, want)
	}
	if _, err := Generate(set(t, `
metadata: {name: none}
spec:
  generators: [{clusters: {}}]
`+guestbookTemplate), nil); !errors.Is(err, errNoClusters) {
		t.Errorf("clusters without a cluster list: err = %v", err)
	}
}
