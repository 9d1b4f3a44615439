package project

import (
	"testing"

	gobwas "github.com/gobwas/glob"
)

// TestGlobAgreesWithArgoCDGlobLibrary compares the matcher with
// github.com/gobwas/glob, the library Argo CD matches project patterns
// with, so that patterns written for Argo CD mean the same here. The
// patterns below avoid the library's known bugs, listed in
// TestGlobDiffersFromArgoCDGlobLibraryOnlyOnItsBugs.
func TestGlobAgreesWithArgoCDGlobLibrary(t *testing.T) {
	patterns := []string{
		"", "*", "**", "a", "a*", "*a", "a*b", "a**b", "*/b", "a/*", "a/**", "**/b", "a?c", "?",
		"[abc]", "[a-c]x", "[!a-c]", "[!/]", "{a,b}", "{a,b}*", "x{a,b}/*", "{a,{b,c}}", "{a,}", "\\*", "a\\?",
		"https://github.com/*", "https://github.com/**", "https://github.com/org/*", "*.example.com",
		"kube-*", "team-?-prod", "}", "a,b",
	}
	texts := []string{
		"", "a", "b", "c", "x", "ab", "aXb", "a/b", "a/c", "abc", "a/x/b", "b/b", "xa/q", "xb/q", "*", "a?",
		"https://github.com/org", "https://github.com/org/repo", "https://github.com/", "api.example.com",
		"a.b.example.com", "kube-system", "team-a-prod", "team-ab-prod", "}", "a,b", "/",
	}
	for _, sep := range []rune{'/', noSeparator} {
		var seps []rune
		if sep != noSeparator {
			seps = []rune{sep}
		}
		for _, p := range patterns {
			ours, err := compileGlob(p, sep)
			if err != nil {
				t.Fatalf("compileGlob(%q): %v", p, err)
			}
			theirs, err := gobwas.Compile(p, seps...)
			if err != nil {
				t.Fatalf("gobwas.Compile(%q): %v", p, err)
			}
			for _, s := range texts {
				if s == "" && (p == "?" || p == "[!a-c]" || p == "[!/]") {
					continue // a library bug, see below
				}
				want := theirs.Match(s)
				if p == "*" {
					want = true // Argo CD's project checks special-case a lone "*"
				}
				if got := ours.match(s); got != want {
					t.Errorf("separators %q: %q~%q = %v, Argo CD's library says %v", seps, p, s, got, want)
				}
			}
		}
	}
}

// TestGlobDiffersFromArgoCDGlobLibraryOnlyOnItsBugs records where the
// library Argo CD uses gives answers its own syntax does not support; here
// the pattern means what it says, or is refused with a clear error.
func TestGlobDiffersFromArgoCDGlobLibraryOnlyOnItsBugs(t *testing.T) {
	// The library lets a prefix and a suffix overlap: "a/**/b" matches "a/b".
	g, err := compileGlob("a/**/b", '/')
	if err != nil {
		t.Fatal(err)
	}
	if lib := gobwas.MustCompile("a/**/b", '/'); !lib.Match("a/b") || g.match("a/b") {
		t.Errorf("a/**/b~a/b: library %v (expected its bug: true), ours %v (want false)", lib.Match("a/b"), g.match("a/b"))
	}
	// The library lets "?" or a negated class, as the whole pattern, match
	// the empty text.
	for _, p := range []string{"?", "[!a-c]"} {
		g, err := compileGlob(p, '/')
		if err != nil {
			t.Fatal(err)
		}
		if lib := gobwas.MustCompile(p, '/'); !lib.Match("") || g.match("") {
			t.Errorf("%q~\"\": library %v (expected its bug: true), ours %v (want false)", p, lib.Match(""), g.match(""))
		}
	}
	// The library accepts an unterminated "{" and a trailing "\"; both
	// are errors here, so Validate can point at them.
	for _, p := range []string{"{a", "a\\"} {
		if _, err := gobwas.Compile(p, '/'); err != nil {
			t.Errorf("library now refuses %q: %v; drop it from this list", p, err)
		}
		if _, err := compileGlob(p, '/'); err == nil {
			t.Errorf("compileGlob(%q) succeeded, want an error", p)
		}
	}
}
