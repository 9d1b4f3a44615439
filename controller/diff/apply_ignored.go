package diff

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ApplyIgnored supports the RespectIgnoreDifferences sync option: it
// returns a copy of desired in which every field that an ignore rule
// matches takes live's value, and ignored fields that live lacks are
// dropped, so that a sync does not overwrite what the rules say belongs
// to someone else. A nil live (the object does not exist yet) returns
// desired unchanged. List elements are matched by their "name" when both
// sides have one, else by position.
func (d *Differ) ApplyIgnored(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if desired == nil {
		return nil, nil
	}
	if live == nil || live.Object == nil {
		return desired.DeepCopy(), nil
	}
	gk := groupKind(desired.Object)
	name, namespace := desired.GetName(), desired.GetNamespace()
	if namespace == "" {
		namespace = live.GetNamespace()
	}
	var static *ignNode
	var exprs []jqExpr
	managers := map[string]bool{}
	for i := range d.rules {
		r := &d.rules[i]
		if !r.matches(gk, name, namespace) {
			continue
		}
		if r.pointers != nil {
			if static == nil {
				static = &ignNode{}
			}
			static.merge(r.pointers)
		}
		exprs = append(exprs, r.jq...)
		for _, m := range r.managers {
			managers[m] = true
		}
	}
	out := desired.DeepCopy()
	ctx := context.Background()
	jqD, err := jqPaths(ctx, exprs, desired.Object)
	if err != nil {
		return nil, fmt.Errorf("apply ignored differences to %s %s: %w", gk, name, err)
	}
	jqL, err := jqPaths(ctx, exprs, live.Object)
	if err != nil {
		return nil, fmt.Errorf("apply ignored differences to %s %s: %w", gk, name, err)
	}
	mf := managedTrie(live.Object, managers)

	var livePaths, desiredPaths [][]any
	for _, n := range []*ignNode{static, jqL, mf} {
		concretePaths(n, live.Object, nil, &livePaths)
	}
	for _, n := range []*ignNode{static, jqD, mf} {
		concretePaths(n, desired.Object, nil, &desiredPaths)
	}
	for _, p := range livePaths {
		v, _ := lookup(live.Object, p)
		setAt(out.Object, live.Object, p, runtime.DeepCopyJSONValue(v))
	}
	// drop, deepest and highest index first, what live does not have
	slices.SortFunc(desiredPaths, func(a, b []any) int { return -comparePaths(a, b) })
	for _, p := range desiredPaths {
		if _, ok := lookup(live.Object, p); !ok {
			deleteAt(out.Object, p)
		}
	}
	return out, nil
}

const maxConcretePaths = 100_000

// concretePaths lists the paths in v that the trie n ignores.
func concretePaths(n *ignNode, v any, prefix []any, out *[][]any) {
	if n == nil || len(*out) >= maxConcretePaths {
		return
	}
	if n.all {
		*out = append(*out, slices.Clone(prefix))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, c := range n.fields {
			if cv, ok := x[k]; ok {
				concretePaths(c, cv, append(prefix, k), out)
			}
		}
	case []any:
		for i, cv := range x {
			if c, _ := elemOf(n, i, cv); c != nil {
				concretePaths(c, cv, append(prefix, i), out)
			}
		}
	}
}

func comparePaths(a, b []any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		ai, aInt := a[i].(int)
		bi, bInt := b[i].(int)
		switch {
		case aInt && bInt:
			if c := cmp.Compare(ai, bi); c != 0 {
				return c
			}
		case !aInt && !bInt:
			if c := cmp.Compare(a[i].(string), b[i].(string)); c != 0 {
				return c
			}
		case aInt:
			return -1
		default:
			return 1
		}
	}
	return cmp.Compare(len(a), len(b))
}

func lookup(v any, p []any) (any, bool) {
	for _, step := range p {
		switch s := step.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || s >= len(l) {
				return nil, false
			}
			v = l[s]
		}
	}
	return v, true
}

// mapIndex finds the element of dst that corresponds to src[i]: the one
// with the same name when both have names, else the same position.
func mapIndex(dst, src []any, i int) int {
	if i < len(src) {
		if sm, ok := src[i].(map[string]any); ok {
			if name, ok := sm["name"]; ok {
				for j, e := range dst {
					if em, ok := e.(map[string]any); ok && scalarEqual(em["name"], name) {
						return j
					}
				}
				return -1
			}
		}
	}
	if i < len(dst) {
		return i
	}
	return -1
}

// setAt writes v at path p (a path in live) into dst, creating missing
// maps; a list element that dst lacks is left alone.
func setAt(dst map[string]any, src any, p []any, v any) {
	var cur any = dst
	for i, step := range p {
		last := i == len(p)-1
		switch s := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			sm, _ := src.(map[string]any)
			src = sm[s]
			if last {
				m[s] = v
				return
			}
			next, ok := m[s]
			if !ok || next == nil {
				if _, isList := p[i+1].(int); isList {
					return
				}
				next = map[string]any{}
				m[s] = next
			}
			cur = next
		case int:
			l, ok := cur.([]any)
			sl, _ := src.([]any)
			if !ok {
				return
			}
			j := mapIndex(l, sl, s)
			if j < 0 {
				return
			}
			if s < len(sl) {
				src = sl[s]
			}
			if last {
				l[j] = v
				return
			}
			cur = l[j]
		}
	}
}

// deleteAt removes the value at path p from dst.
func deleteAt(dst map[string]any, p []any) {
	if len(p) == 0 {
		return
	}
	parentPath, last := p[:len(p)-1], p[len(p)-1]
	parent, ok := lookup(dst, parentPath)
	if !ok {
		return
	}
	switch s := last.(type) {
	case string:
		if m, ok := parent.(map[string]any); ok {
			delete(m, s)
		}
	case int:
		l, ok := parent.([]any)
		if !ok || s >= len(l) {
			return
		}
		l = slices.Delete(l, s, s+1)
		if len(parentPath) == 0 {
			return
		}
		grand, ok := lookup(dst, parentPath[:len(parentPath)-1])
		if !ok {
			return
		}
		switch g := parentPath[len(parentPath)-1].(type) {
		case string:
			grand.(map[string]any)[g] = l
		case int:
			grand.([]any)[g] = l
		}
	}
}
