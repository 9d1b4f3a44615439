package diff

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ignNode is one level of a trie of ignored paths. A node with all set
// ignores the whole value found at its path; otherwise its children say
// which parts below it are ignored. Fields are matched by map key, index
// by list position, keyed and values by the content of list elements
// (the FieldsV1 "k:" and "v:" forms of managedFields).
type ignNode struct {
	all    bool
	fields map[string]*ignNode
	index  map[int]*ignNode
	keyed  []keyedIgn
	values []valueIgn
}

type keyedIgn struct {
	key  map[string]any
	node *ignNode
}

type valueIgn struct {
	value any
	node  *ignNode
}

func (n *ignNode) field(k string) *ignNode {
	if n.fields == nil {
		n.fields = map[string]*ignNode{}
	}
	c := n.fields[k]
	if c == nil {
		c = &ignNode{}
		n.fields[k] = c
	}
	return c
}

func (n *ignNode) idx(i int) *ignNode {
	if n.index == nil {
		n.index = map[int]*ignNode{}
	}
	c := n.index[i]
	if c == nil {
		c = &ignNode{}
		n.index[i] = c
	}
	return c
}

// merge adds every path of src to n.
func (n *ignNode) merge(src *ignNode) {
	if src == nil || n.all {
		return
	}
	if src.all {
		*n = ignNode{all: true}
		return
	}
	for k, c := range src.fields {
		n.field(k).merge(c)
	}
	for i, c := range src.index {
		n.idx(i).merge(c)
	}
	n.keyed = append(n.keyed, src.keyed...)
	n.values = append(n.values, src.values...)
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, errors.New("empty pointer would ignore the whole object")
	}
	if p[0] != '/' {
		return nil, errors.New("pointer must start with '/'")
	}
	raw := strings.Split(p[1:], "/")
	out := make([]string, len(raw))
	for i, t := range raw {
		if !strings.Contains(t, "~") {
			out[i] = t
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 >= len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("token %d: '~' must be followed by '0' or '1'", i)
			}
			if t[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		out[i] = b.String()
	}
	return out, nil
}

// arrayIndex reports whether an RFC 6901 token names a list position.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

// addPointer records tokens in the trie; a numeric token matches both a
// map key of that spelling and a list index, as RFC 6901 leaves the choice
// to the document.
func (n *ignNode) addPointer(tokens []string) {
	if n.all {
		return
	}
	if len(tokens) == 0 {
		*n = ignNode{all: true}
		return
	}
	n.field(tokens[0]).addPointer(tokens[1:])
	if i, ok := arrayIndex(tokens[0]); ok {
		n.idx(i).addPointer(tokens[1:])
	}
}

// addPath records a jq path (strings for keys, ints for indices).
func (n *ignNode) addPath(path []any) {
	if n.all {
		return
	}
	if len(path) == 0 {
		*n = ignNode{all: true}
		return
	}
	switch t := path[0].(type) {
	case string:
		n.field(t).addPath(path[1:])
	case int:
		if t >= 0 {
			n.idx(t).addPath(path[1:])
		}
	case float64:
		if t >= 0 && t == float64(int(t)) {
			n.idx(int(t)).addPath(path[1:])
		}
	}
}

// addFieldsV1 records the fields of a managedFields FieldsV1 set.
// "." or an empty set marks the path itself as owned, which - as in
// structured-merge-diff's RemoveItems - drops the whole value.
func (n *ignNode) addFieldsV1(set map[string]any) {
	if n.all {
		return
	}
	if len(set) == 0 {
		*n = ignNode{all: true}
		return
	}
	if _, ok := set["."]; ok {
		*n = ignNode{all: true}
		return
	}
	for k, v := range set {
		child, _ := v.(map[string]any)
		if len(k) < 2 || k[1] != ':' {
			continue
		}
		body := k[2:]
		switch k[0] {
		case 'f':
			n.field(body).addFieldsV1(child)
		case 'i':
			if i, err := strconv.Atoi(body); err == nil && i >= 0 {
				n.idx(i).addFieldsV1(child)
			}
		case 'k':
			var key map[string]any
			if json.Unmarshal([]byte(body), &key) != nil || len(key) == 0 {
				continue
			}
			c := &ignNode{}
			c.addFieldsV1(child)
			n.keyed = append(n.keyed, keyedIgn{key: key, node: c})
		case 'v':
			var val any
			if json.Unmarshal([]byte(body), &val) != nil {
				continue
			}
			c := &ignNode{}
			c.addFieldsV1(child)
			n.values = append(n.values, valueIgn{value: val, node: c})
		}
	}
}

// cursor walks up to three tries in step: the static rules (JSON pointers
// and built-in normalization), the jq paths of one side, and the
// managedFields of trusted managers. The zero cursor ignores nothing.
type cursor struct {
	a, b, c *ignNode
}

func (c cursor) empty() bool { return c.a == nil && c.b == nil && c.c == nil }

func fieldOf(n *ignNode, k string) (*ignNode, bool) {
	if n == nil || n.fields == nil {
		return nil, false
	}
	ch := n.fields[k]
	if ch == nil {
		return nil, false
	}
	return ch, ch.all
}

// field descends into map key k; all reports that the key is ignored.
func (c cursor) field(k string) (out cursor, all bool) {
	if c.empty() {
		return cursor{}, false
	}
	var x, y, z bool
	out.a, x = fieldOf(c.a, k)
	out.b, y = fieldOf(c.b, k)
	out.c, z = fieldOf(c.c, k)
	return out, x || y || z
}

func elemOf(n *ignNode, i int, v any) (*ignNode, bool) {
	if n == nil {
		return nil, false
	}
	var found *ignNode
	if n.index != nil {
		found = n.index[i]
	}
	if len(n.keyed) > 0 {
		if m, ok := v.(map[string]any); ok {
			for _, k := range n.keyed {
				if keyMatches(k.key, m) {
					found = joinNodes(found, k.node)
				}
			}
		}
	}
	for _, val := range n.values {
		if deepEqual(val.value, v) {
			found = joinNodes(found, val.node)
		}
	}
	if found == nil {
		return nil, false
	}
	return found, found.all
}

func joinNodes(a, b *ignNode) *ignNode {
	if a == nil {
		return b
	}
	m := &ignNode{}
	m.merge(a)
	m.merge(b)
	return m
}

func keyMatches(key, m map[string]any) bool {
	for k, want := range key {
		got, ok := m[k]
		if !ok || !scalarEqual(got, want) {
			return false
		}
	}
	return true
}

// elem descends into list element i holding v.
func (c cursor) elem(i int, v any) (out cursor, all bool) {
	if c.empty() {
		return cursor{}, false
	}
	var x, y, z bool
	out.a, x = elemOf(c.a, i, v)
	out.b, y = elemOf(c.b, i, v)
	out.c, z = elemOf(c.c, i, v)
	return out, x || y || z
}
