// Package deeplinks turns the settings' application.links and
// project.links (Argo CD's keys of argocd-cm) into the links the API gives
// with an application or a project: a title and a URL built from the
// object, shown when an optional condition holds.
//
//	application.links: |
//	  - url: https://grafana.example.com/d/app?var-ns={{ .app.spec.destination.namespace }}
//	    title: Dashboard
//	    description: the namespace's dashboard
//	    icon.class: fa-chart-line
//	    if: app.spec.project == "default"
//
// The URL is a Go template over the object (.app, .project, .cluster);
// the condition is an expression in expr's language (as Argo CD's). Both
// are the admin's, but the data is the tenants': a template or a
// condition that fails, or a URL whose scheme is not http or https (a
// javascript: URL would run in the console), gives no link rather than an
// error.
package deeplinks

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"text/template"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
	"sigs.k8s.io/yaml"
)

// Bounds of the admin's rules and of what one evaluation builds.
const (
	maxRules     = 100
	maxURL       = 4096
	maxCondition = 1024
)

// Link is a link to show.
type Link struct {
	Title, URL, Description, IconClass string
}

// Rule is one compiled entry of a links setting.
type Rule struct {
	title, description, iconClass string
	url                           *template.Template
	cond                          *vm.Program
}

// entry is an entry as written.
type entry struct {
	URL         string `json:"url"`
	Title       string `json:"title"`
	Description string `json:"description"`
	IconClass   string `json:"icon.class"`
	If          string `json:"if"`
}

// Parse compiles a links setting (a YAML list); key names it in errors.
func Parse(key, doc string) ([]Rule, error) {
	if strings.TrimSpace(doc) == "" {
		return nil, nil
	}
	var entries []entry
	if err := yaml.UnmarshalStrict([]byte(doc), &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if len(entries) > maxRules {
		return nil, fmt.Errorf("%s: %d links, more than %d", key, len(entries), maxRules)
	}
	out := make([]Rule, 0, len(entries))
	for i, e := range entries {
		at := fmt.Sprintf("%s[%d]", key, i)
		if e.Title == "" || e.URL == "" {
			return nil, fmt.Errorf("%s: title and url are required", at)
		}
		if len(e.URL) > maxURL || len(e.If) > maxCondition {
			return nil, fmt.Errorf("%s: url or if too long", at)
		}
		t, err := template.New(at).Option("missingkey=zero").Parse(e.URL)
		if err != nil {
			return nil, fmt.Errorf("%s: url: %w", at, err)
		}
		r := Rule{title: e.Title, description: e.Description, iconClass: e.IconClass, url: t}
		if strings.TrimSpace(e.If) != "" {
			if r.cond, err = expr.Compile(e.If, expr.AsBool(), expr.MaxNodes(500)); err != nil {
				return nil, fmt.Errorf("%s: if: %w", at, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// errUnsafe is a URL whose scheme is not http or https.
var errUnsafe = errors.New("the URL is not http or https")

// Evaluate returns the links of rules whose condition holds for data,
// in order; a rule that fails is left out and its error returned with the
// others (for the log, never for the caller).
func Evaluate(rules []Rule, data map[string]any) ([]Link, error) {
	var out []Link
	var errs []error
	for _, r := range rules {
		if r.cond != nil {
			ok, err := expr.Run(r.cond, data)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: if: %w", r.url.Name(), err))
				continue
			}
			if b, _ := ok.(bool); !b {
				continue
			}
		}
		var buf bytes.Buffer
		if err := r.url.Execute(&limited{w: &buf, left: maxURL}, data); err != nil {
			errs = append(errs, fmt.Errorf("%s: url: %w", r.url.Name(), err))
			continue
		}
		u, err := url.Parse(strings.TrimSpace(buf.String()))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("%s: %w", r.url.Name(), errUnsafe))
			continue
		}
		out = append(out, Link{Title: r.title, URL: u.String(), Description: r.description, IconClass: r.iconClass})
	}
	return out, errors.Join(errs...)
}

// limited fails a template whose output grows past left bytes.
type limited struct {
	w    *bytes.Buffer
	left int
}

func (l *limited) Write(p []byte) (int, error) {
	if len(p) > l.left {
		return 0, fmt.Errorf("the URL is longer than %d bytes", maxURL)
	}
	l.left -= len(p)
	return l.w.Write(p)
}
