package deeplinks

import (
	"strings"
	"testing"
)

func TestLinks(t *testing.T) {
	rules, err := Parse("application.links", `
- url: https://grafana.example.com/d/app?var-ns={{ .app.spec.destination.namespace }}
  title: Dashboard
  icon.class: fa-chart-line
- url: https://logs.example.com/?q={{ .app.metadata.name }}&env={{ .project.metadata.labels.env }}
  title: Logs
  description: the app's logs
  if: project.metadata.labels.env == "prod"
- url: "{{ .app.metadata.annotations.link }}"
  title: From an annotation
- url: https://x.example.com/{{ .app.metadata.name | printf "%s" }}
  title: Broken condition
  if: app.spec.nothing.deeper == 1
`)
	if err != nil {
		t.Fatal(err)
	}
	data := func(env, annotation string) map[string]any {
		return map[string]any{
			"app": map[string]any{
				"metadata": map[string]any{"name": "guestbook", "annotations": map[string]any{"link": annotation}},
				"spec":     map[string]any{"destination": map[string]any{"namespace": "web"}},
			},
			"project": map[string]any{"metadata": map[string]any{"labels": map[string]any{"env": env}}},
		}
	}
	links, errs := Evaluate(rules, data("prod", "javascript:alert(1)"))
	var got []string
	for _, l := range links {
		got = append(got, l.Title+" "+l.URL)
	}
	want := "Dashboard https://grafana.example.com/d/app?var-ns=web|Logs https://logs.example.com/?q=guestbook&env=prod"
	if strings.Join(got, "|") != want {
		t.Errorf("links %q, want %q", strings.Join(got, "|"), want)
	}
	if errs == nil || !strings.Contains(errs.Error(), "not http or https") || !strings.Contains(errs.Error(), "if:") {
		t.Errorf("errors %v, want the unsafe URL and the failing condition", errs)
	}
	if links, _ := Evaluate(rules, data("dev", "https://ok.example.com/x")); len(links) != 2 || links[1].URL != "https://ok.example.com/x" {
		t.Errorf("dev: %+v", links)
	}
	for _, bad := range []string{"- title: x", "- url: https://x\n  title: t\n  if: '(('", "not a list", "- url: '{{ .x '\n  title: t"} {
		if _, err := Parse("k", bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
