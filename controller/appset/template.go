package appset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/controller/appset/names"
)

// Limits of one rendering.
const (
	// maxRendered bounds the text one template field renders to.
	maxRendered = 1 << 20
	// maxRepeat bounds what repeat, until and untilStep build.
	maxRepeat = 100000
)

// errTooLarge is wrapped when a template renders more than maxRendered.
var errTooLarge = errors.New("template output too large")

// renderer renders the string fields of a template with one parameter
// set, the Argo CD way: "{{param}}" placeholders, or Go templates with
// Sprig's functions when goTemplate.
type renderer struct {
	goTemplate bool
	options    []string
	// parsed caches the Go templates by text: a set's elements render
	// the same fields.
	parsed map[string]*template.Template
}

// field renders one string field.
func (r renderer) field(text string, params map[string]any) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	if !r.goTemplate {
		return replacePlaceholders(text, flatten(params)), nil
	}
	t, ok := r.parsed[text]
	if !ok {
		t = template.New("").Funcs(funcs)
		for _, o := range r.options {
			t = t.Option(o)
		}
		var err error
		if t, err = t.Parse(text); err != nil {
			return "", err
		}
		if r.parsed != nil {
			r.parsed[text] = t
		}
	}
	var out limitedBuffer
	if err := t.Execute(&out, params); err != nil {
		return "", err
	}
	return out.String(), nil
}

// value renders every string in v (a decoded JSON value), keys left as
// they are.
func (r renderer) value(v any, params map[string]any) (any, error) {
	switch v := v.(type) {
	case string:
		return r.field(v, params)
	case map[string]any:
		out := make(map[string]any, len(v))
		for _, k := range slices.Sorted(maps.Keys(v)) { // errors in a stable order
			rendered, err := r.value(v[k], params)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = rendered
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			rendered, err := r.value(e, params)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = rendered
		}
		return out, nil
	}
	return v, nil
}

// placeholder is "{{ name }}" with optional spaces.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`)

// replacePlaceholders fills "{{name}}" with params[name]; a placeholder
// of no parameter stays as it is, as in Argo CD.
func replacePlaceholders(text string, params map[string]string) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		if v, ok := params[placeholder.FindStringSubmatch(m)[1]]; ok {
			return v
		}
		return m
	})
}

// flatten turns nested parameters into the dotted names placeholders
// use ("values.replicas"); lists and other values become their JSON or
// text.
func flatten(params map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(prefix+k+".", e)
			}
		case string:
			out[strings.TrimSuffix(prefix, ".")] = v
		case nil:
			out[strings.TrimSuffix(prefix, ".")] = ""
		case []any:
			b, _ := json.Marshal(v)
			out[strings.TrimSuffix(prefix, ".")] = string(b)
		default:
			out[strings.TrimSuffix(prefix, ".")] = fmt.Sprint(v)
		}
	}
	walk("", params)
	return out
}

// limitedBuffer fails a template once it has written maxRendered bytes.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxRendered {
		return 0, fmt.Errorf("more than %d bytes: %w", maxRendered, errTooLarge)
	}
	return b.Buffer.Write(p)
}

// funcs are Sprig's functions as Argo CD offers them (without env,
// expandenv and getHostByName, which read the controller's environment
// and network), with the functions that build without bound (repeat,
// until, untilStep) bounded and the key generators left out (seconds of
// CPU each), plus Argo CD's own: normalize, slugify, toYaml, fromYaml,
// fromYamlArray.
var funcs = func() template.FuncMap {
	m := sprig.TxtFuncMap()
	for _, name := range []string{"env", "expandenv", "getHostByName", "genPrivateKey", "genCA", "genCAWithKey",
		"genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey", "buildCustomCert"} {
		delete(m, name)
	}
	m["repeat"] = func(n int, s string) (string, error) {
		if n < 0 || n*len(s) > maxRendered {
			return "", fmt.Errorf("repeat: %d × %d bytes is more than %d: %w", n, len(s), maxRendered, errTooLarge)
		}
		return strings.Repeat(s, n), nil
	}
	m["until"] = func(n int) ([]int, error) { return bounded(0, n, 1) }
	m["untilStep"] = bounded
	m["normalize"] = normalize
	m["slugify"] = slugify
	m["toYaml"] = func(v any) (string, error) {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	}
	m["fromYaml"] = func(s string) (map[string]any, error) {
		out := map[string]any{}
		return out, yaml.Unmarshal([]byte(s), &out)
	}
	m["fromYamlArray"] = func(s string) ([]any, error) {
		var out []any
		return out, yaml.Unmarshal([]byte(s), &out)
	}
	return m
}()

// bounded is Sprig's untilStep with at most maxRepeat elements.
func bounded(start, stop, step int) ([]int, error) {
	if step == 0 || (stop-start)/step > maxRepeat {
		return nil, fmt.Errorf("untilStep %d %d %d: more than %d elements: %w", start, stop, step, maxRepeat, errTooLarge)
	}
	var out []int
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}

// normalize is names.Normalize, the generators' name rule.
var normalize = names.Normalize

// slugify is Argo CD's slugify: lower case, runs of other characters to
// one "-", cut to n (default 50) characters, optionally at a word
// boundary.
func slugify(args ...any) (string, error) {
	if len(args) == 0 {
		return "", errors.New("slugify: no text")
	}
	n, smart, text := names.SlugLength, true, ""
	switch len(args) {
	case 1:
		text = fmt.Sprint(args[0])
	case 3:
		var ok bool
		if n, ok = args[0].(int); !ok {
			return "", errors.New("slugify: the length must be an integer")
		}
		if smart, ok = args[1].(bool); !ok {
			return "", errors.New("slugify: smart truncation must be a bool")
		}
		text = fmt.Sprint(args[2])
	default:
		return "", errors.New("slugify: want TEXT, or LENGTH SMART TEXT")
	}
	return names.Slug(text, n, smart), nil
}
