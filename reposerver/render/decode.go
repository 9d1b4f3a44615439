package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// maxDepth bounds nesting (and alias chains) in one document. Kubernetes
	// objects nest a few dozen levels at most.
	maxDepth = 1000
	// nodeCost is the estimated size of one node beyond its text, used to
	// bound what aliases expand to.
	nodeCost = 8
)

// yaml11Bools are the plain scalars that YAML 1.1 (and so kubectl, Helm and
// Argo CD, through sigs.k8s.io/yaml) reads as booleans. yaml.v3 reads most
// of them as strings; we follow the tools users compare us with.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"true": true, "True": true, "TRUE": true,
	"on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false,
	"false": false, "False": false, "FALSE": false,
	"off": false, "Off": false, "OFF": false,
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Decode parses a stream of YAML documents (---) or a JSON object/array into
// objects, in order. Empty documents and comments are skipped; `kind: List`
// (and *List kinds with items) are flattened; a document that is not an
// object, or lacks apiVersion or kind, is an error naming the document index
// (and the source name). Size limits enforced (ErrTooLarge), YAML alias bombs
// bounded, never panics.
//
// Documents are numbered from 1, counting only those with content. Plain
// YAML scalars resolve as in YAML 1.1 (yes/no/on/off are booleans,
// timestamps stay strings), matching kubectl and Argo CD.
func Decode(name string, data []byte, limits Limits) (objs []*unstructured.Unstructured, err error) {
	defer func() {
		if r := recover(); r != nil {
			objs, err = nil, fmt.Errorf("%s: decode: internal error: %v", name, r)
		}
	}()
	limits = limits.WithDefaults()
	if n := int64(len(data)); n > limits.MaxCombinedSize {
		return nil, fmt.Errorf("%s: %d bytes exceed the limit of %d for one render: %w", name, n, limits.MaxCombinedSize, ErrTooLarge)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	if looksLikeJSON(data) {
		objs, err := newDecoder(name, limits).decodeJSON(data)
		if err == nil || errors.Is(err, ErrTooLarge) {
			return objs, err
		}
		// JSON is YAML, but a YAML stream may also open with a flow
		// collection: give YAML a chance before reporting the JSON error.
		if yobjs, yerr := newDecoder(name, limits).decodeYAML(data); yerr == nil {
			return yobjs, nil
		}
		return nil, err
	}
	return newDecoder(name, limits).decodeYAML(data)
}

type decoder struct {
	name   string
	limits Limits
	out    []*unstructured.Unstructured
	// aliasTotal is what aliases may still expand to in the documents
	// that follow.
	aliasTotal int64
}

func newDecoder(name string, limits Limits) *decoder {
	return &decoder{name: name, limits: limits, aliasTotal: limits.MaxCombinedSize}
}

func looksLikeJSON(data []byte) bool {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	return len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
}

// decodeJSON reads one or more JSON values; a top-level array holds one
// document per element.
func (d *decoder) decodeJSON(data []byte) ([]*unstructured.Unstructured, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	doc := 0
	for {
		rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")
		if len(rest) == 0 {
			return d.out, nil
		}
		if rest[0] != '[' {
			doc++
			if err := d.jsonDocument(dec, doc); err != nil {
				return nil, err
			}
			continue
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", d.name, err)
		}
		for dec.More() {
			doc++
			if err := d.jsonDocument(dec, doc); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, fmt.Errorf("%s: invalid JSON: %w", d.name, err)
		}
	}
}

// jsonDocument decodes the next JSON value of dec as document doc.
func (d *decoder) jsonDocument(dec *json.Decoder, doc int) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%s: document %d: invalid JSON: %w", d.name, doc, err)
	}
	if n := int64(len(raw)); n > d.limits.MaxManifestSize {
		return fmt.Errorf("%s: document %d: %d bytes exceed the limit of %d for one manifest: %w", d.name, doc, n, d.limits.MaxManifestSize, ErrTooLarge)
	}
	inner := json.NewDecoder(bytes.NewReader(raw))
	inner.UseNumber()
	var v any
	if err := inner.Decode(&v); err != nil {
		return fmt.Errorf("%s: document %d: invalid JSON: %w", d.name, doc, err)
	}
	if v == nil {
		return nil
	}
	v, err := normalizeJSON(v, 0)
	if err != nil {
		return fmt.Errorf("%s: document %d: %w", d.name, doc, err)
	}
	return d.add(v, fmt.Sprintf("document %d", doc))
}

// normalizeJSON turns json.Number into int64 or float64, the number types
// unstructured objects use.
func normalizeJSON(v any, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, nil
		}
		f, err := t.Float64()
		if err != nil {
			return nil, fmt.Errorf("number %q: %w", t.String(), err)
		}
		return f, nil
	case map[string]any:
		for k, e := range t {
			n, err := normalizeJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
	case []any:
		for i, e := range t {
			n, err := normalizeJSON(e, depth+1)
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
	}
	return v, nil
}

// decodeYAML splits the stream at document markers and converts each
// document on its own, so one document's size is known before it is parsed.
func (d *decoder) decodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	doc := 0
	for _, chunk := range splitDocuments(data) {
		if !hasContent(chunk.text) {
			continue
		}
		doc++
		where := fmt.Sprintf("document %d (line %d)", doc, chunk.line)
		if n := int64(len(chunk.text)); n > d.limits.MaxManifestSize {
			return nil, fmt.Errorf("%s: %s: %d bytes exceed the limit of %d for one manifest: %w", d.name, where, n, d.limits.MaxManifestSize, ErrTooLarge)
		}
		dec := yaml.NewDecoder(bytes.NewReader(chunk.text))
		for {
			var node yaml.Node
			err := dec.Decode(&node)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", d.name, where, err)
			}
			c := converter{
				budget: min(d.limits.MaxManifestSize, d.aliasTotal),
				active: map[*yaml.Node]bool{},
			}
			start := c.budget
			v, err := c.value(&node)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", d.name, where, err)
			}
			d.aliasTotal -= start - c.budget
			if v == nil {
				continue
			}
			if err := d.add(v, where); err != nil {
				return nil, err
			}
		}
	}
	return d.out, nil
}

type chunk struct {
	text []byte
	line int // 1-based line of the chunk's first line in the stream
}

// splitDocuments cuts a YAML stream before every "---" line and after every
// "..." line. YAML forbids both markers at the start of a line inside any
// scalar, so the cut never splits a document. Directive lines (%YAML) stay
// with the document they precede.
func splitDocuments(data []byte) []chunk {
	var chunks []chunk
	start, startLine, line := 0, 1, 1
	directivesOnly := true
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		text := data[pos:next]
		switch {
		case isMarker(text, "---") && (!directivesOnly || pos == start):
			if pos > start {
				chunks = append(chunks, chunk{text: data[start:pos], line: startLine})
			}
			start, startLine = pos, line
			directivesOnly = false
		case isMarker(text, "..."):
			chunks = append(chunks, chunk{text: data[start:pos], line: startLine})
			start, startLine = next, line+1
			directivesOnly = true
		default:
			if t := bytes.TrimSpace(text); len(t) > 0 && t[0] != '#' && t[0] != '%' {
				directivesOnly = false
			}
		}
		pos = next
		line++
	}
	if start < len(data) {
		chunks = append(chunks, chunk{text: data[start:], line: startLine})
	}
	return chunks
}

// isMarker reports whether line starts with marker followed by a blank or
// the end of the line.
func isMarker(line []byte, marker string) bool {
	if !bytes.HasPrefix(line, []byte(marker)) {
		return false
	}
	rest := line[len(marker):]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n'
}

// hasContent reports whether a chunk holds more than markers, directives,
// comments and blank lines.
func hasContent(text []byte) bool {
	for line := range bytes.Lines(text) {
		t := bytes.TrimSpace(line)
		if isMarker(line, "---") {
			t = bytes.TrimSpace(line[3:])
		}
		if len(t) > 0 && t[0] != '#' && t[0] != '%' {
			return true
		}
	}
	return false
}

// add appends one decoded document, flattening lists.
func (d *decoder) add(v any, where string) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: %s: not an object", d.name, where)
	}
	kind, _ := obj["kind"].(string)
	if items, isList := listItems(obj, kind); isList {
		for i, item := range items {
			if err := d.add(item, fmt.Sprintf("%s, item %d", where, i+1)); err != nil {
				return err
			}
		}
		return nil
	}
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion == "" {
		return fmt.Errorf("%s: %s: missing apiVersion", d.name, where)
	}
	if kind == "" {
		return fmt.Errorf("%s: %s: missing kind", d.name, where)
	}
	d.out = append(d.out, &unstructured.Unstructured{Object: obj})
	return nil
}

// listItems returns the items of a `kind: List` (whose items may be absent
// or null) or of a *List kind whose items are a list.
func listItems(obj map[string]any, kind string) ([]any, bool) {
	if !strings.HasSuffix(kind, "List") {
		return nil, false
	}
	raw, present := obj["items"]
	items, isSlice := raw.([]any)
	switch {
	case isSlice:
		return items, true
	case kind == "List" && raw == nil:
		return nil, true
	case present && raw == nil:
		// A typed list with `items: null` (kubectl output for an empty list).
		_, hasSpec := obj["spec"]
		return nil, !hasSpec
	}
	return nil, false
}

// converter turns a yaml.v3 node tree into JSON-compatible values. What
// is written out is bounded by the document's size; what aliases expand to
// is bounded by a budget of estimated bytes (the manifest limit), so that a
// small document cannot expand into a huge one.
type converter struct {
	budget  int64
	depth   int
	aliased int                 // > 0 while expanding an alias
	active  map[*yaml.Node]bool // anchored nodes being expanded, to catch cycles
}

func (c *converter) value(n *yaml.Node) (any, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	if c.aliased > 0 {
		c.budget -= nodeCost + int64(len(n.Value))
		if c.budget < 0 {
			return nil, fmt.Errorf("aliases expand beyond the limit for one manifest: %w", ErrTooLarge)
		}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias %q", n.Line, n.Value)
		}
		if c.active[n.Alias] {
			return nil, fmt.Errorf("line %d: alias %q refers to itself", n.Line, n.Value)
		}
		c.active[n.Alias] = true
		c.aliased++
		defer func() {
			delete(c.active, n.Alias)
			c.aliased--
		}()
		return c.value(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n)
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func (c *converter) mapping(n *yaml.Node) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merged map[string]any
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			src, err := c.value(v)
			if err != nil {
				return nil, err
			}
			if merged == nil {
				merged = map[string]any{}
			}
			if err := mergeInto(merged, src, k.Line); err != nil {
				return nil, err
			}
			continue
		}
		key, err := c.key(k)
		if err != nil {
			return nil, err
		}
		val, err := c.value(v)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	// Keys written in the mapping win over merged ones.
	for k, v := range merged {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out, nil
}

// mergeInto adds the keys of a merge source (a mapping or a list of
// mappings) that are not there yet: earlier sources win.
func mergeInto(dst map[string]any, src any, line int) error {
	switch t := src.(type) {
	case map[string]any:
		for k, v := range t {
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
		return nil
	case []any:
		for _, e := range t {
			m, ok := e.(map[string]any)
			if !ok {
				return fmt.Errorf("line %d: merge key needs mappings", line)
			}
			if err := mergeInto(dst, m, line); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: merge key needs a mapping", line)
}

func isMergeKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode || k.Value != "<<" {
		return false
	}
	return k.Style == 0 || k.ShortTag() == "!!merge"
}

// key converts a mapping key to the string JSON needs, as sigs.k8s.io/yaml
// does: scalars are formatted, collections are refused.
func (c *converter) key(k *yaml.Node) (string, error) {
	v, err := c.value(k)
	if err != nil {
		return "", err
	}
	switch t := v.(type) {
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case float64:
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	case nil:
		return "null", nil
	}
	return "", fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
}

func scalar(n *yaml.Node) (any, error) {
	plain := n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
	// The parser fills Tag with the resolved tag; TaggedStyle marks one
	// written in the document.
	untagged := n.Style&yaml.TaggedStyle == 0 || n.Tag == "!"
	if !plain && untagged {
		return n.Value, nil
	}
	if plain && untagged {
		if b, ok := yaml11Bools[n.Value]; ok {
			return b, nil
		}
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		if b, ok := yaml11Bools[n.Value]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("line %d: %q is not a boolean", n.Line, n.Value)
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		return floatScalar(n)
	case "!!float":
		return floatScalar(n)
	}
	// Strings, timestamps (kept as written, as YAML 1.1 decoders do),
	// binary and application tags.
	return n.Value, nil
}

func floatScalar(n *yaml.Node) (any, error) {
	var f float64
	if err := n.Decode(&f); err != nil {
		return nil, fmt.Errorf("line %d: %q is not a number", n.Line, n.Value)
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("line %d: %q has no JSON form", n.Line, n.Value)
	}
	return f, nil
}
