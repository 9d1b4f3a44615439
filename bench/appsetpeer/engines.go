// Package appsetpeer sets graphcd's ApplicationSet generation
// (controller/appset.Generate) beside Argo CD's own (the ApplicationSet
// controller's template.GenerateApplications with its ListGenerator and
// utils.Render), on the same ApplicationSet, in one `go test -bench` run:
//
//	GOTOOLCHAIN=go1.27.3 go test -run . -bench . -benchmem -count 5
//
// It is a module of its own so that Argo CD, the Go version it needs
// (1.27) and the k8s.io replace block it needs never reach graphcd's
// go.mod. The benchmarks live in bench_test.go; TestSameApplications
// checks that both sides generate the same Applications from the input.
package appsetpeer

import (
	"fmt"
	"io"
	"sort"
	"strings"

	argotemplate "github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	argogenerators "github.com/argoproj/argo-cd/v3/applicationset/generators"
	argoutils "github.com/argoproj/argo-cd/v3/applicationset/utils"
	argov1alpha1 "github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	log "github.com/sirupsen/logrus"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset"
)

// Case is one ApplicationSet shape of the benchmark.
type Case struct {
	Name       string
	GoTemplate bool
	// NameTemplate is the template's metadata.name.
	NameTemplate string
}

// Cases are the two template languages, with the templates of graphcd's
// in-package BenchmarkGenerate1000 (controller/appset/bench_test.go).
var Cases = []Case{
	{Name: "placeholders", GoTemplate: false, NameTemplate: "{{cluster}}-guestbook"},
	{Name: "goTemplate", GoTemplate: true, NameTemplate: "{{ .cluster | lower }}-guestbook"},
}

// Manifest is the ApplicationSet of c with n list elements, as YAML that
// both graphcd's and Argo CD's ApplicationSet types read.
func Manifest(c Case, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: bench, namespace: argocd}
spec:
  goTemplate: %t
  generators:
  - list:
      elements:
`, c.GoTemplate)
	for i := range n {
		fmt.Fprintf(&b, "      - {cluster: c%04d, url: 'https://c%04d.example.com', env: prod}\n", i, i)
	}
	fmt.Fprintf(&b, `  template:
    metadata: {name: '%s', labels: {env: prod}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, targetRevision: main, path: guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: guestbook}
`, c.NameTemplate)
	return b.String()
}

// GraphcdSet reads manifest as graphcd's ApplicationSet.
func GraphcdSet(manifest string) (*v1alpha1.ApplicationSet, error) {
	var s v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &s); err != nil {
		return nil, fmt.Errorf("graphcd ApplicationSet: %w", err)
	}
	return &s, nil
}

// ArgoSet reads manifest as Argo CD's ApplicationSet.
func ArgoSet(manifest string) (*argov1alpha1.ApplicationSet, error) {
	var s argov1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict([]byte(manifest), &s); err != nil {
		return nil, fmt.Errorf("argo cd ApplicationSet: %w", err)
	}
	return &s, nil
}

// Graphcd generates set's Applications with graphcd's appset.Generate,
// failing on a whole-set or a per-element error.
func Graphcd(set *v1alpha1.ApplicationSet) ([]*v1alpha1.Application, error) {
	results, err := appset.Generate(set, nil)
	if err != nil {
		return nil, err
	}
	apps := make([]*v1alpha1.Application, len(results))
	for i, r := range results {
		if r.Err != nil {
			return nil, fmt.Errorf("element %d: %w", i, r.Err)
		}
		apps[i] = r.App
	}
	return apps, nil
}

// Peer is Argo CD's generation step as its ApplicationSet controller
// sets it up: the list generator under its controller name and the
// default renderer. Other generators are left out: the input uses none.
type Peer struct {
	generators map[string]argogenerators.Generator
	renderer   argoutils.Renderer
}

// NewPeer returns Argo CD's generation step. Logrus, which it logs
// through (one info line per generator per run), is set to warnings and
// discarded so that no benchmark pays for log output.
func NewPeer() *Peer {
	log.SetOutput(io.Discard)
	log.SetLevel(log.WarnLevel)
	return &Peer{
		generators: map[string]argogenerators.Generator{"List": argogenerators.NewListGenerator()},
		renderer:   &argoutils.Render{},
	}
}

// Generate runs template.GenerateApplications, the call the controller's
// Reconcile makes before it validates the Applications against the
// cluster (projects, destinations) and writes them. The list generator
// reads no client, so none is passed.
func (p *Peer) Generate(set *argov1alpha1.ApplicationSet) ([]argov1alpha1.Application, error) {
	apps, _, err := argotemplate.GenerateApplications(log.NewEntry(log.StandardLogger()), *set, p.generators, p.renderer, nil)
	return apps, err
}

// Summary is one line per Application with the fields the template sets,
// sorted by name: what both sides must agree on.
type Summary []string

// GraphcdSummary summarizes graphcd's Applications.
func GraphcdSummary(apps []*v1alpha1.Application) Summary {
	out := make(Summary, 0, len(apps))
	for _, a := range apps {
		src := a.Spec.Source
		if src == nil {
			src = &v1alpha1.ApplicationSource{}
		}
		out = append(out, line(a.Name, a.Namespace, labels(a.Labels), a.Spec.Project,
			src.RepoURL, src.TargetRevision, src.Path, a.Spec.Destination.Server, a.Spec.Destination.Namespace))
	}
	sort.Strings(out)
	return out
}

// ArgoSummary summarizes Argo CD's Applications.
func ArgoSummary(apps []argov1alpha1.Application) Summary {
	out := make(Summary, 0, len(apps))
	for _, a := range apps {
		src := a.Spec.Source
		if src == nil {
			src = &argov1alpha1.ApplicationSource{}
		}
		out = append(out, line(a.Name, a.Namespace, labels(a.Labels), a.Spec.Project,
			src.RepoURL, src.TargetRevision, src.Path, a.Spec.Destination.Server, a.Spec.Destination.Namespace))
	}
	sort.Strings(out)
	return out
}

func line(fields ...string) string { return strings.Join(fields, " ") }

func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + m[k])
	}
	return b.String()
}
