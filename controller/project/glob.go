package project

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// maxPatternLen bounds a glob so that a pathological project cannot make a
// check expensive; real patterns are a few dozen characters.
const maxPatternLen = 4096

// noSeparator compiles a glob in which "*" and "?" match any rune, as Argo
// CD does for destinations, kinds, windows and orphaned resources.
const noSeparator rune = -1

// globOp is what one state of a compiled glob does.
type globOp uint8

const (
	opRune    globOp = iota // consume exactly r
	opAny                   // "?": consume one rune other than the separator
	opClass                 // "[...]": consume one rune of the class
	opStar                  // "*": consume any run of runes without the separator
	opStarAll               // "**": consume any run of runes
	opSplit                 // "{": continue at the start of each alternative
	opJump                  // "," inside braces: continue after the closing "}"
)

// globState is one state of the automaton a glob compiles to. Every
// epsilon edge (star to next, split to alternative, jump to end) points
// forward, so one forward pass computes a closure.
type globState struct {
	op    globOp
	r     rune
	class *charClass
	// next holds the targets of opSplit (one per alternative) and of
	// opJump (one).
	next []int
}

// charClass is a bracket expression such as [a-z0-9] or [!.].
type charClass struct {
	negated bool
	ranges  []runeRange
}

type runeRange struct{ lo, hi rune }

func (c *charClass) match(r rune) bool {
	for _, rg := range c.ranges {
		if rg.lo <= r && r <= rg.hi {
			return !c.negated
		}
	}
	return c.negated
}

// globShape picks a fast path for the common pattern shapes.
type globShape uint8

const (
	shapeGeneral    globShape = iota
	shapeAll                  // "*" alone, or "**": anything
	shapeLiteral              // no wildcard: equality
	shapePrefixStar           // literal + "*": prefix, rest without separator
	shapePrefixAll            // literal + "**": prefix
)

// glob is a compiled pattern with the syntax of the glob library Argo CD
// uses: "*" matches a run of runes without the separator, "**" one that may
// include it, "?" one rune other than the separator, "[abc]", "[a-z]" and
// "[!a-z]" one rune of (or not of) a class, "{a,b}" any alternative, and a
// backslash escapes the next rune. A pattern that is exactly "*" matches
// everything, separators included, as in Argo CD's project checks.
type glob struct {
	src    string
	sep    rune
	shape  globShape
	prefix string // literal text every match starts with
	start  int    // first state after the prefix
	states []globState
}

// errPatternTooLong is returned for patterns over maxPatternLen bytes.
var errPatternTooLong = fmt.Errorf("pattern longer than %d bytes", maxPatternLen)

// compileGlob compiles pattern; sep is '/' when "*" must stop at slashes,
// noSeparator otherwise.
func compileGlob(pattern string, sep rune) (*glob, error) {
	if len(pattern) > maxPatternLen {
		return nil, errPatternTooLong
	}
	if !utf8.ValidString(pattern) {
		return nil, errors.New("pattern is not valid UTF-8")
	}
	g := &glob{src: pattern, sep: sep}
	if pattern == "*" {
		g.shape = shapeAll
		return g, nil
	}
	// Most patterns are a literal, maybe followed by stars: no automaton.
	meta := strings.IndexAny(pattern, "*?[{\\")
	if meta < 0 {
		g.shape, g.prefix = shapeLiteral, pattern
		return g, nil
	}
	if stars := pattern[meta:]; strings.Trim(stars, "*") == "" {
		g.prefix = pattern[:meta]
		switch {
		case len(stars) == 1 && sep != noSeparator:
			g.shape = shapePrefixStar
		case meta == 0:
			g.shape = shapeAll
		default:
			g.shape = shapePrefixAll
		}
		return g, nil
	}
	p := globParser{src: pattern, sep: sep, states: make([]globState, 0, utf8.RuneCountInString(pattern)+1)}
	if err := p.parseSeq(0); err != nil {
		return nil, err
	}
	g.states = p.states
	g.analyse()
	return g, nil
}

// analyse finds the literal prefix and the fast-path shape.
func (g *glob) analyse() {
	var prefix []rune
	i := 0
	for i < len(g.states) && g.states[i].op == opRune {
		prefix = append(prefix, g.states[i].r)
		i++
	}
	g.prefix, g.start = string(prefix), i
	switch {
	case i == len(g.states):
		g.shape = shapeLiteral
	case i == len(g.states)-1 && g.states[i].op == opStarAll:
		g.shape = shapePrefixAll
		if i == 0 {
			g.shape = shapeAll
		}
	case i == len(g.states)-1 && g.states[i].op == opStar:
		g.shape = shapePrefixStar
	}
}

// match reports whether s matches the whole pattern. Text that is not
// valid UTF-8 is matched rune by rune, each bad byte reading as U+FFFD,
// like any other text.
func (g *glob) match(s string) bool {
	switch {
	case g.shape == shapeAll:
		return true
	case !utf8.ValidString(s) && g.shape == shapeGeneral:
		return g.run(s, 0)
	case !utf8.ValidString(s):
		s = string([]rune(s)) // each bad byte becomes U+FFFD
	}
	switch g.shape {
	case shapeLiteral:
		return s == g.prefix
	case shapePrefixAll:
		return strings.HasPrefix(s, g.prefix)
	case shapePrefixStar:
		return strings.HasPrefix(s, g.prefix) && (g.sep == noSeparator || !strings.ContainsRune(s[len(g.prefix):], g.sep))
	}
	if !strings.HasPrefix(s, g.prefix) {
		return false
	}
	return g.run(s[len(g.prefix):], g.start)
}

// run simulates the automaton on s from state start: the set of live
// states advances one rune at a time, so the cost is bounded by
// len(s) × len(states) whatever the pattern, with no backtracking.
func (g *glob) run(s string, start int) bool {
	n := len(g.states) // state n accepts
	words := n/64 + 1
	var bufA, bufB [4]uint64
	cur, nxt := bufA[:], bufB[:]
	if words > len(bufA) {
		cur, nxt = make([]uint64, words), make([]uint64, words)
	} else {
		cur, nxt = cur[:words], nxt[:words]
	}
	cur[start/64] |= 1 << (start % 64)
	g.closure(cur)
	for _, c := range s {
		clear(nxt)
		live := false
		for w, word := range cur {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &^= 1 << b
				i := w*64 + b
				if i >= n {
					continue
				}
				st := &g.states[i]
				to := -1
				switch st.op {
				case opRune:
					if c == st.r {
						to = i + 1
					}
				case opAny:
					if c != g.sep {
						to = i + 1
					}
				case opClass:
					if st.class.match(c) {
						to = i + 1
					}
				case opStar:
					if c != g.sep {
						to = i
					}
				case opStarAll:
					to = i
				}
				if to >= 0 {
					nxt[to/64] |= 1 << (to % 64)
					live = true
				}
			}
		}
		if !live {
			return false
		}
		g.closure(nxt)
		cur, nxt = nxt, cur
	}
	return cur[n/64]&(1<<(n%64)) != 0
}

// closure adds to set every state reachable through epsilon edges. Edges
// point forward, so visiting set bits in increasing order is enough, as
// long as bits added to the current word are seen too.
func (g *glob) closure(set []uint64) {
	n := len(g.states)
	for w := range set {
		var done uint64
		for {
			pending := set[w] &^ done
			if pending == 0 {
				break
			}
			b := bits.TrailingZeros64(pending)
			done |= 1 << b
			i := w*64 + b
			if i >= n {
				continue
			}
			st := &g.states[i]
			switch st.op {
			case opStar, opStarAll:
				set[(i+1)/64] |= 1 << ((i + 1) % 64)
			case opSplit, opJump:
				for _, t := range st.next {
					set[t/64] |= 1 << (t % 64)
				}
			}
		}
	}
}

// globParser turns pattern text into states.
type globParser struct {
	src    string
	pos    int
	sep    rune
	states []globState
}

func (p *globParser) emit(st globState) int {
	p.states = append(p.states, st)
	return len(p.states) - 1
}

// parseSeq parses until the end of the text or, inside braces (depth > 0),
// until a "," or "}" that ends the current alternative.
func (p *globParser) parseSeq(depth int) error {
	for p.pos < len(p.src) {
		c, size := utf8.DecodeRuneInString(p.src[p.pos:])
		switch c {
		case ',', '}':
			if depth > 0 {
				return nil
			}
			p.pos += size
			p.emit(globState{op: opRune, r: c})
		case '*':
			stars := 0
			for p.pos < len(p.src) && p.src[p.pos] == '*' {
				stars++
				p.pos++
			}
			if stars > 1 || p.sep == noSeparator {
				p.emit(globState{op: opStarAll})
			} else {
				p.emit(globState{op: opStar})
			}
		case '?':
			p.pos += size
			p.emit(globState{op: opAny})
		case '[':
			p.pos += size
			class, err := p.parseClass()
			if err != nil {
				return err
			}
			p.emit(globState{op: opClass, class: class})
		case '{':
			p.pos += size
			if err := p.parseAlternatives(depth + 1); err != nil {
				return err
			}
		case '\\':
			p.pos += size
			r, err := p.escaped()
			if err != nil {
				return err
			}
			p.emit(globState{op: opRune, r: r})
		default:
			p.pos += size
			p.emit(globState{op: opRune, r: c})
		}
	}
	if depth > 0 {
		return errors.New("unterminated alternatives: missing '}'")
	}
	return nil
}

// parseAlternatives parses "a,b,c}" after an opening brace.
func (p *globParser) parseAlternatives(depth int) error {
	split := p.emit(globState{op: opSplit})
	var jumps []int
	for {
		p.states[split].next = append(p.states[split].next, len(p.states))
		if err := p.parseSeq(depth); err != nil {
			return err
		}
		// parseSeq stopped at "," or "}" (the end of text is an error).
		if p.src[p.pos] == '}' {
			p.pos++
			break
		}
		p.pos++ // ","
		jumps = append(jumps, p.emit(globState{op: opJump}))
	}
	end := len(p.states)
	for _, j := range jumps {
		p.states[j].next = []int{end}
	}
	return nil
}

// parseClass parses a bracket expression after "[".
func (p *globParser) parseClass() (*charClass, error) {
	class := &charClass{}
	if strings.HasPrefix(p.src[p.pos:], "!") {
		class.negated = true
		p.pos++
	}
	first := true
	for {
		if p.pos >= len(p.src) {
			return nil, errors.New("unterminated character class: missing ']'")
		}
		c, size := utf8.DecodeRuneInString(p.src[p.pos:])
		if c == ']' {
			if first {
				return nil, errors.New("empty character class")
			}
			p.pos += size
			return class, nil
		}
		lo, err := p.classRune(first)
		if err != nil {
			return nil, err
		}
		first = false
		hi := lo
		if strings.HasPrefix(p.src[p.pos:], "-") {
			p.pos++
			if p.pos >= len(p.src) || p.src[p.pos] == ']' {
				return nil, errors.New("character range has no end")
			}
			if hi, err = p.classRune(false); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("character range %c-%c is reversed", lo, hi)
			}
		}
		class.ranges = append(class.ranges, runeRange{lo, hi})
	}
}

// classRune reads one rune of a class, unescaping it; a bare "-" is a
// literal only as the class's first rune.
func (p *globParser) classRune(first bool) (rune, error) {
	c, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	switch {
	case c == '\\':
		return p.escaped()
	case c == '-' && !first:
		return 0, errors.New("unexpected '-' in character class")
	}
	return c, nil
}

// escaped returns the rune after a backslash.
func (p *globParser) escaped() (rune, error) {
	if p.pos >= len(p.src) {
		return 0, errors.New("pattern ends with an escape '\\'")
	}
	c, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return c, nil
}
