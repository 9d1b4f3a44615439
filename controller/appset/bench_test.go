package appset

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkGenerate1000 renders 1,000 Applications from one list
// generator, with placeholders and with goTemplate (Sprig functions).
func BenchmarkGenerate1000(b *testing.B) {
	var elems strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&elems, "      - {cluster: c%04d, url: 'https://c%04d.example.com', env: prod}\n", i, i)
	}
	for _, tc := range []struct {
		name, goTemplate, tmpl string
	}{
		{"placeholders", "false", "'{{cluster}}-guestbook'"},
		{"goTemplate", "true", "'{{ .cluster | lower }}-guestbook'"},
	} {
		set := set(b, `
metadata: {name: bench, namespace: graphcd}
spec:
  goTemplate: `+tc.goTemplate+`
  generators:
  - list:
      elements:
`+elems.String()+`
  template:
    metadata: {name: `+tc.tmpl+`, labels: {env: prod}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, targetRevision: main, path: guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: guestbook}
`)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				got, err := Generate(set, nil)
				if err != nil || len(got) != 1000 || got[999].Err != nil {
					b.Fatalf("generated %d, err %v", len(got), err)
				}
			}
		})
	}
}
