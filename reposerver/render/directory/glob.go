package directory

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// maxGlobLen bounds an include/exclude pattern; the matcher's work grows
// with the pattern's length times the path's.
const maxGlobLen = 4096

// glob is a compiled include/exclude pattern with the semantics Argo CD
// gives these fields (github.com/gobwas/glob compiled without separators):
//
//	a*b     "*" is any sequence, "/" included
//	a?b     "?" is any one character
//	[abc]   one of the characters; [a-z] a range; [!abc] none of them
//	{a,b}   any of the comma-separated patterns, which may nest
//	\x      the character x itself
//
// It is matched against the slash-separated path of a file relative to the
// application directory, and runs as a small NFA, so its cost stays
// proportional to pattern times path length whatever the pattern.
type glob struct {
	states []state
	start  int
}

type opcode uint8

const (
	opRune  opcode = iota // consume r
	opAny                 // consume any rune
	opClass               // consume a rune in (or, negated, not in) ranges
	opSplit               // no input: go to out and out1
	opMatch               // the pattern matched
)

type state struct {
	op     opcode
	r      rune
	neg    bool
	ranges [][2]rune
	out    int
	out1   int
}

// node is a parsed pattern element.
type node struct {
	op     opcode // opRune, opAny, opClass; opSplit stands for "*"
	r      rune
	neg    bool
	ranges [][2]rune
	alts   [][]node // non-nil for a {a,b} list
}

// compileGlob compiles pattern; an empty pattern yields nil, which callers
// treat as "not set".
func compileGlob(pattern string) (*glob, error) {
	if pattern == "" {
		return nil, nil
	}
	if len(pattern) > maxGlobLen {
		return nil, fmt.Errorf("pattern longer than %d bytes", maxGlobLen)
	}
	if !utf8.ValidString(pattern) {
		return nil, errors.New("pattern is not valid UTF-8")
	}
	p := parser{src: []rune(pattern)}
	seq, err := p.sequence(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, fmt.Errorf("unexpected %q at offset %d", p.src[p.pos], p.pos)
	}
	g := &glob{}
	match := g.add(state{op: opMatch})
	g.start = g.compile(seq, match)
	return g, nil
}

type parser struct {
	src []rune
	pos int
}

// sequence parses until the end of input or, inside braces (depth > 0),
// until an unescaped ',' or '}'.
func (p *parser) sequence(depth int) ([]node, error) {
	var seq []node
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case depth > 0 && (c == ',' || c == '}'):
			return seq, nil
		case c == '*':
			p.pos++
			if len(seq) == 0 || seq[len(seq)-1].op != opSplit || seq[len(seq)-1].alts != nil {
				seq = append(seq, node{op: opSplit})
			}
		case c == '?':
			p.pos++
			seq = append(seq, node{op: opAny})
		case c == '[':
			n, err := p.class()
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		case c == '{':
			n, err := p.alternatives(depth)
			if err != nil {
				return nil, err
			}
			seq = append(seq, n)
		case c == '\\':
			if p.pos+1 >= len(p.src) {
				return nil, errors.New("pattern ends with a lone backslash")
			}
			seq = append(seq, node{op: opRune, r: p.src[p.pos+1]})
			p.pos += 2
		default:
			p.pos++
			seq = append(seq, node{op: opRune, r: c})
		}
	}
	if depth > 0 {
		return nil, errors.New("unclosed '{'")
	}
	return seq, nil
}

func (p *parser) alternatives(depth int) (node, error) {
	if depth >= 32 {
		return node{}, errors.New("'{' nested too deeply")
	}
	p.pos++ // '{'
	n := node{op: opSplit, alts: [][]node{}}
	for {
		alt, err := p.sequence(depth + 1)
		if err != nil {
			return node{}, err
		}
		n.alts = append(n.alts, alt)
		c := p.src[p.pos]
		p.pos++
		if c == '}' {
			return n, nil
		}
	}
}

func (p *parser) class() (node, error) {
	start := p.pos
	p.pos++ // '['
	n := node{op: opClass}
	if p.pos < len(p.src) && (p.src[p.pos] == '!' || p.src[p.pos] == '^') {
		n.neg = true
		p.pos++
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == ']' && len(n.ranges) > 0 {
			p.pos++
			return n, nil
		}
		if c == '\\' && p.pos+1 < len(p.src) {
			p.pos++
			c = p.src[p.pos]
		}
		lo, hi := c, c
		if p.pos+2 < len(p.src) && p.src[p.pos+1] == '-' && p.src[p.pos+2] != ']' {
			hi = p.src[p.pos+2]
			p.pos += 2
			if hi < lo {
				return node{}, fmt.Errorf("invalid range %q-%q at offset %d", lo, hi, start)
			}
		}
		n.ranges = append(n.ranges, [2]rune{lo, hi})
		p.pos++
	}
	return node{}, fmt.Errorf("unclosed '[' at offset %d", start)
}

func (g *glob) add(s state) int {
	g.states = append(g.states, s)
	return len(g.states) - 1
}

// compile emits the states of seq, which continue to next, and returns the
// first; it works from the end so every state knows its successor.
func (g *glob) compile(seq []node, next int) int {
	for i := len(seq) - 1; i >= 0; i-- {
		n := seq[i]
		switch {
		case n.alts != nil:
			starts := make([]int, len(n.alts))
			for j, alt := range n.alts {
				starts[j] = g.compile(alt, next)
			}
			cur := starts[len(starts)-1]
			for j := len(starts) - 2; j >= 0; j-- {
				cur = g.add(state{op: opSplit, out: starts[j], out1: cur})
			}
			next = cur
		case n.op == opSplit: // '*': loop over any rune, or go on
			split := g.add(state{op: opSplit})
			anyRune := g.add(state{op: opAny, out: split})
			g.states[split].out, g.states[split].out1 = anyRune, next
			next = split
		default:
			next = g.add(state{op: n.op, r: n.r, neg: n.neg, ranges: n.ranges, out: next})
		}
	}
	return next
}

// match reports whether the whole of s matches.
func (g *glob) match(s string) bool {
	cur := make([]int, 0, len(g.states))
	next := make([]int, 0, len(g.states))
	seen := make([]int, len(g.states)) // step+1 at which a state was added
	step := 1
	cur = g.closure(cur, g.start, seen, step)
	for _, r := range s {
		step++
		next = next[:0]
		for _, id := range cur {
			st := &g.states[id]
			if st.consumes(r) {
				next = g.closure(next, st.out, seen, step)
			}
		}
		cur, next = next, cur
		if len(cur) == 0 {
			return false
		}
	}
	for _, id := range cur {
		if g.states[id].op == opMatch {
			return true
		}
	}
	return false
}

// closure adds id and every state reachable from it without input.
func (g *glob) closure(set []int, id int, seen []int, step int) []int {
	if seen[id] == step {
		return set
	}
	seen[id] = step
	if st := g.states[id]; st.op == opSplit {
		set = g.closure(set, st.out, seen, step)
		return g.closure(set, st.out1, seen, step)
	}
	return append(set, id)
}

func (s *state) consumes(r rune) bool {
	switch s.op {
	case opRune:
		return s.r == r
	case opAny:
		return true
	case opClass:
		in := false
		for _, rg := range s.ranges {
			if rg[0] <= r && r <= rg[1] {
				in = true
				break
			}
		}
		return in != s.neg
	}
	return false
}
