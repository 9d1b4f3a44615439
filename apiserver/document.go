package apiserver

import (
	"errors"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"
)

// documentCost is what a GraphQL document can cost the engine, measured
// without expanding any fragment more than once: gqlgen's complexity
// walk, its depth check and parts of gqlparser's validation expand every
// fragment spread where it stands, so a few hundred bytes of fragments
// spreading each other twice expand to billions of selections.
type documentCost struct {
	// tokens counts the document's lexical tokens, comments included.
	tokens int
	// selections counts the fields, inline fragments and fragment spreads
	// of every operation and every fragment definition, each spread
	// counted with all it expands to. It saturates at costCeiling.
	selections int
	// depth is the deepest nesting of fields of an operation, counted
	// through fragments; fragments themselves add no level.
	depth int
	// spreads counts the fragment spreads as written.
	spreads int
	// cycle lists the fragments of a cycle (F0, F1, F0) when a fragment
	// spreads itself; such a document never expands.
	cycle []string
	// repeats is how often the most selected place of a response (one
	// response path of an operation or fragment definition) is selected,
	// counted through fragments and fields of the same name; repeated is
	// that path. gqlparser compares every two selections of one place to
	// check they can merge, so its work grows with repeats times
	// selections. Measured only for documents within the selection limit
	// and without cycles (0 otherwise).
	repeats  int
	repeated string
}

// costCeiling is where selections saturate: far above any limit, and
// small enough that adding two counts cannot overflow.
const costCeiling = 1 << 53

// addCost adds two counts of at most costCeiling, saturating.
func addCost(a, b int) int { return min(a+b, costCeiling) }

// errTooManyTokens is countTokens's answer past its limit.
var errTooManyTokens = errors.New("too many tokens")

// countTokens counts the tokens of query, comments included, stopping
// with errTooManyTokens after limit. It returns the lexer's error for a
// document that does not lex (the parser reports it better).
func countTokens(query string, limit int) (int, error) {
	lex := lexer.New(&ast.Source{Input: query})
	for n := 0; ; n++ {
		tok, err := lex.ReadToken()
		if err != nil {
			return n, err //nolint:wrapcheck // the caller only tests for it
		}
		if tok.Kind == lexer.EOF {
			return n, nil
		}
		if n >= limit {
			return n + 1, errTooManyTokens
		}
	}
}

// measureDocument measures doc, visiting each selection it holds once:
// the size and depth of a fragment are computed once, bottom-up, and
// reused at every spread of it.
func measureDocument(doc *ast.QueryDocument) documentCost {
	w := &costWalk{
		byName: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		memo:   make(map[*ast.FragmentDefinition]setCost, len(doc.Fragments)),
		onPath: map[*ast.FragmentDefinition]bool{},
	}
	for _, f := range doc.Fragments {
		if _, dup := w.byName[f.Name]; !dup {
			w.byName[f.Name] = f // validation refuses the duplicate
		}
	}
	var c documentCost
	for _, op := range doc.Operations {
		oc := w.set(op.SelectionSet)
		c.selections = addCost(c.selections, oc.selections)
		c.depth = max(c.depth, oc.depth)
	}
	// Validation visits fragment definitions as well, used or not.
	for _, f := range doc.Fragments {
		c.selections = addCost(c.selections, w.fragment(f).selections)
	}
	c.spreads, c.cycle = w.spreads, w.cycle
	return c
}

// setCost is the cost of one selection set with its spreads expanded.
type setCost struct{ selections, depth int }

// costWalk measures selection sets with a memo of fragment costs.
type costWalk struct {
	byName map[string]*ast.FragmentDefinition
	memo   map[*ast.FragmentDefinition]setCost
	// onPath are the fragments being measured, path their order, to
	// recognise and report a fragment that spreads itself.
	onPath  map[*ast.FragmentDefinition]bool
	path    []*ast.FragmentDefinition
	spreads int
	cycle   []string
}

func (w *costWalk) set(set ast.SelectionSet) setCost {
	var c setCost
	for _, sel := range set {
		var s setCost
		switch sel := sel.(type) {
		case *ast.Field:
			s = w.set(sel.SelectionSet)
			s.depth++
		case *ast.InlineFragment:
			s = w.set(sel.SelectionSet)
		case *ast.FragmentSpread:
			w.spreads++
			if f := w.byName[sel.Name]; f != nil {
				s = w.fragment(f)
			} // an unknown fragment is validation's to report
		}
		c.selections = addCost(c.selections, addCost(1, s.selections))
		c.depth = max(c.depth, s.depth)
	}
	return c
}

// fragment returns f's cost, measuring it the first time. A spread of a
// fragment already being measured closes a cycle: it costs nothing here
// and the cycle is recorded.
func (w *costWalk) fragment(f *ast.FragmentDefinition) setCost {
	if c, ok := w.memo[f]; ok {
		return c
	}
	if w.onPath[f] {
		if w.cycle == nil {
			w.cycle = cycleNames(w.path, f)
		}
		return setCost{}
	}
	w.onPath[f] = true
	w.path = append(w.path, f)
	c := w.set(f.SelectionSet)
	w.path = w.path[:len(w.path)-1]
	delete(w.onPath, f)
	w.memo[f] = c
	return c
}

// cycleNames returns the names of the fragments of path from f on, and
// f again: the cycle f closes.
func cycleNames(path []*ast.FragmentDefinition, f *ast.FragmentDefinition) []string {
	var names []string
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == f {
			for _, p := range path[i:] {
				names = append(names, p.Name)
			}
			break
		}
	}
	return append(names, f.Name)
}

// measureRepeats sets c.repeats and c.repeated by expanding doc, which
// visits c.selections selections: call it only when those are few and
// there is no cycle.
func measureRepeats(doc *ast.QueryDocument, c *documentCost) {
	w := &repeatWalk{byName: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)), places: map[place]int{}}
	for _, f := range doc.Fragments {
		if _, dup := w.byName[f.Name]; !dup {
			w.byName[f.Name] = f
		}
	}
	// Each operation and each fragment definition is a root of its own.
	for _, op := range doc.Operations {
		w.set(op.SelectionSet, w.root())
	}
	for _, f := range doc.Fragments {
		w.set(f.SelectionSet, w.root())
	}
	c.repeats = w.most
	if w.most > 0 {
		c.repeated = w.path(w.mostAt)
	}
}

// place is a response path: the response name of a field under the
// place of its parent.
type place struct {
	parent int
	name   string
}

// repeatWalk counts the selections of each place of the expanded
// document.
type repeatWalk struct {
	byName map[string]*ast.FragmentDefinition
	places map[place]int
	// nodes are the places by number (0 unused); counts their selections.
	nodes  []place
	counts []int
	most   int
	mostAt int
}

// root returns a new root place number.
func (w *repeatWalk) root() int {
	if len(w.nodes) == 0 {
		w.nodes, w.counts = []place{{}}, []int{0}
	}
	w.nodes = append(w.nodes, place{parent: -1})
	w.counts = append(w.counts, 0)
	return len(w.nodes) - 1
}

func (w *repeatWalk) set(set ast.SelectionSet, parent int) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			key := place{parent: parent, name: sel.Alias}
			n, ok := w.places[key]
			if !ok {
				n = len(w.nodes)
				w.places[key] = n
				w.nodes = append(w.nodes, key)
				w.counts = append(w.counts, 0)
			}
			w.counts[n]++
			if w.counts[n] > w.most {
				w.most, w.mostAt = w.counts[n], n
			}
			w.set(sel.SelectionSet, n)
		case *ast.InlineFragment:
			w.set(sel.SelectionSet, parent)
		case *ast.FragmentSpread:
			if f := w.byName[sel.Name]; f != nil {
				w.set(f.SelectionSet, parent)
			}
		}
	}
}

// path returns the response path of place n, like "a.b.c".
func (w *repeatWalk) path(n int) string {
	var names []string
	for ; n > 0 && w.nodes[n].parent != -1; n = w.nodes[n].parent {
		names = append(names, w.nodes[n].name)
	}
	slices.Reverse(names)
	return strings.Join(names, ".")
}
