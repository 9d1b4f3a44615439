package project

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlobMatch(t *testing.T) {
	type tc struct {
		pattern, text string
		want          bool
	}
	slash := []tc{
		// Literals and the empty pattern.
		{"", "", true},
		{"", "a", false},
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"abc", "ab", false},
		// "*" alone matches everything, slashes included.
		{"*", "", true},
		{"*", "https://github.com/a/b", true},
		// Otherwise "*" stops at "/" and "**" crosses it.
		{"https://github.com/*", "https://github.com/org", true},
		{"https://github.com/*", "https://github.com/org/repo", false},
		{"https://github.com/**", "https://github.com/org/repo", true},
		{"https://github.com/**", "https://github.com/", true},
		{"https://github.com/*/*", "https://github.com/org/repo", true},
		{"https://github.com/*/*", "https://github.com/org/sub/repo", false},
		{"https://github.com/**/repo", "https://github.com/org/sub/repo", true},
		{"https://github.com/**/repo", "https://github.com/org/repo", true},
		{"https://github.com/**/repo", "https://github.com/repo", false},
		{"**", "a/b/c", true},
		{"***", "a/b", true},
		{"*/b", "x/b", true},
		{"*/b", "x/y/b", false},
		{"a*", "a", true},
		{"a*", "abc", true},
		{"a*", "a/b", false},
		{"*a", "bba", true},
		{"*a*", "xxaxx", true},
		{"*a*", "xx/axx", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY/c", false},
		{"a**b*c", "aX/bYc", true},
		// "?" is one rune other than "/".
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"a?c", "ac", false},
		{"a?c", "aéc", true},
		// Classes.
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[a-z]x", "qx", true},
		{"[a-z]x", "Qx", false},
		{"[!a-z]", "Q", true},
		{"[!a-z]", "q", false},
		{"[!a]", "/", true},
		{"[-a]", "-", true},
		{"[\\]]", "]", true},
		{"[a-cx-z0-9]", "y", true},
		{"[a-cx-z0-9]", "5", true},
		{"[a-cx-z0-9]", "m", false},
		{"[é]", "é", true},
		// Alternatives.
		{"{a,b}", "a", true},
		{"{a,b}", "b", true},
		{"{a,b}", "c", false},
		{"{a,{b,c}}", "c", true},
		{"{a,}", "", true},
		{"{a,}", "a", true},
		{"{}", "", true},
		{"x{a,b}*", "xbzz", true},
		{"x{a,b}*", "xb/c", false},
		{"{*,x}", "a/b", false},
		{"{**,x}", "a/b", true},
		{"team-{a,b}/*", "team-b/svc", true},
		{"{a\\,b}", "a,b", true},
		// Escapes and literal punctuation.
		{"\\*", "*", true},
		{"\\*", "x", false},
		{"a\\?", "a?", true},
		{"}", "}", true},
		{"a,b", "a,b", true},
		{"a]", "a]", true},
		// Text that is not UTF-8 reads as U+FFFD per bad byte.
		{"a?", "a\xff", true},
		{"a\uFFFD", "a\xff", true},
	}
	for _, c := range slash {
		t.Run(fmt.Sprintf("%q~%q", c.pattern, c.text), func(t *testing.T) {
			g, err := compileGlob(c.pattern, '/')
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if got := g.match(c.text); got != c.want {
				t.Errorf("match = %v, want %v", got, c.want)
			}
		})
	}
	// Without a separator "*" and "?" cross "/".
	free := []tc{
		{"https://*", "https://a/b", true},
		{"*-prod", "team/a-prod", true},
		{"a?c", "a/c", true},
		{"*", "", true},
		{"kube-*", "kube-system", true},
		{"kube-*", "default", false},
	}
	for _, c := range free {
		g, err := compileGlob(c.pattern, noSeparator)
		if err != nil {
			t.Fatalf("compile %q: %v", c.pattern, err)
		}
		if got := g.match(c.text); got != c.want {
			t.Errorf("%q~%q (no separator) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
}

func TestGlobCompileErrors(t *testing.T) {
	for pattern, want := range map[string]string{
		"[":                                  "unterminated character class",
		"[abc":                               "unterminated character class",
		"[]":                                 "empty character class",
		"[]a]":                               "empty character class",
		"[!]":                                "empty character class",
		"[a-]":                               "character range has no end",
		"[z-a]":                              "character range z-a is reversed",
		"[a-c-e]":                            "unexpected '-' in character class",
		"{a":                                 "unterminated alternatives",
		"{a,{b}":                             "unterminated alternatives",
		"a\\":                                "pattern ends with an escape",
		"[a\\":                               "pattern ends with an escape",
		"a\xff":                              "not valid UTF-8",
		strings.Repeat("a", maxPatternLen+1): "pattern longer than 4096 bytes",
	} {
		_, err := compileGlob(pattern, '/')
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("compileGlob(%.20q) error = %v, want it to contain %q", pattern, err, want)
		}
	}
}

// TestGlobLinearTime guards against backtracking blow-ups: a pattern of
// many stars against a long near-miss must still be decided by the
// automaton, whose work is bounded by len(text) × len(pattern).
func TestGlobLinearTime(t *testing.T) {
	pattern := strings.Repeat("a*", 40) + "b"
	g, err := compileGlob(pattern, noSeparator)
	if err != nil {
		t.Fatal(err)
	}
	if g.match(strings.Repeat("a", 2000)) {
		t.Error("matched a text without b")
	}
	if !g.match(strings.Repeat("a", 2000) + "b") {
		t.Error("did not match a text ending in b")
	}
}

// globToRegexp translates a valid glob into an anchored Go regular
// expression independently of the automaton, as an oracle for tests.
func globToRegexp(pattern string, sep rune) string {
	if pattern == "*" {
		return `(?s)^.*$`
	}
	notSep := `.`
	if sep != noSeparator {
		notSep = `[^` + regexp.QuoteMeta(string(sep)) + `]`
	}
	var b strings.Builder
	b.WriteString(`(?s)^(?:`)
	runes := []rune(pattern)
	depth := 0
	for i := 0; i < len(runes); i++ {
		c := runes[i]
		switch {
		case c == '*':
			n := 1
			for i+1 < len(runes) && runes[i+1] == '*' {
				n++
				i++
			}
			if n > 1 || sep == noSeparator {
				b.WriteString(`.*`)
			} else {
				b.WriteString(notSep + `*`)
			}
		case c == '?':
			b.WriteString(notSep)
		case c == '\\':
			i++
			b.WriteString(regexp.QuoteMeta(string(runes[i])))
		case c == '{':
			depth++
			b.WriteString(`(?:`)
		case c == ',' && depth > 0:
			b.WriteString(`|`)
		case c == '}' && depth > 0:
			depth--
			b.WriteString(`)`)
		case c == '[':
			i++
			b.WriteString(`[`)
			if runes[i] == '!' {
				b.WriteString(`^`)
				i++
			}
			for ; runes[i] != ']'; i++ {
				r := runes[i]
				if r == '\\' {
					i++
					r = runes[i]
				}
				fmt.Fprintf(&b, `\x{%x}`, r)
				if runes[i+1] == '-' && runes[i+2] != ']' {
					i += 2
					hi := runes[i]
					if hi == '\\' {
						i++
						hi = runes[i]
					}
					fmt.Fprintf(&b, `-\x{%x}`, hi)
				}
			}
			b.WriteString(`]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return b.String()
}

func TestGlobAgreesWithRegexpOracle(t *testing.T) {
	patterns := []string{"a*b", "**/x", "{a,b*}/c", "[!a-c]?", "x\\*y", "{a,{b,c*}}d", "*.git", "https://*/org/**"}
	texts := []string{"", "ab", "a/b", "axb", "q/x", "x", "b/c", "bzz/c", "d?", "x*y", "cd", "czzd", "c/zd", "r.git", "https://h/org/a/b"}
	for _, sep := range []rune{'/', noSeparator} {
		for _, p := range patterns {
			g, err := compileGlob(p, sep)
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(globToRegexp(p, sep))
			for _, s := range texts {
				if got, want := g.match(s), re.MatchString(s); got != want {
					t.Errorf("sep %q: %q~%q = %v, oracle %v", sep, p, s, got, want)
				}
			}
		}
	}
}

// FuzzGlob checks that compiling and matching never panic and that every
// pattern that compiles matches exactly what the regexp oracle matches.
func FuzzGlob(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://github.com/*/*", "https://github.com/a/b"},
		{"**/x{a,b}", "q/w/xb"},
		{"[!a-z]?*", "Q/zz"},
		{"{a,{b,}}*c", "bc"},
		{"a\\*", "a*"},
		{"[]", ""},
		{"{", "{"},
	} {
		f.Add(seed[0], seed[1], true)
	}
	f.Fuzz(func(t *testing.T, pattern, text string, slash bool) {
		sep := noSeparator
		if slash {
			sep = '/'
		}
		g, err := compileGlob(pattern, sep)
		if err != nil {
			return
		}
		got := g.match(text)
		re, err := regexp.Compile(globToRegexp(pattern, sep))
		if err != nil {
			t.Fatalf("oracle for %q: %v", pattern, err)
		}
		// The oracle reads bad UTF-8 bytes as U+FFFD too.
		if want := re.MatchString(text); got != want && utf8.ValidString(pattern) {
			t.Fatalf("%q~%q (sep %q) = %v, oracle %v", pattern, text, sep, got, want)
		}
	})
}
