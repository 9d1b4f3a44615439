package repourl

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzParse checks the identity of arbitrary URLs and patterns: a URL is
// the same repository as itself (unless it is empty once normalised,
// which names none), sameness does not depend on the order
// it is asked in, and nothing panics.
//
//	go test -run '^$' -fuzz FuzzParse ./internal/repourl/
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"https://github.com/org/repo.git", "git@github.com:org/repo", "ssh://git@host:22/a/../b/",
		"HTTPS://user:tok@Example.com:443/x?y#z", "https://github.com/org/*", "file:///tmp/r", "%zz://", "[::1]:x",
	} {
		f.Add(s, "https://github.com/org/repo")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !Same(a, a) && Parse(a).Key() != "" {
			t.Fatalf("%q is not the same repository as itself", a)
		}
		if Same(a, b) != Same(b, a) {
			t.Fatalf("Same(%q, %q) = %v but Same(%q, %q) = %v", a, b, Same(a, b), b, a, Same(b, a))
		}
		_, _ = Parse(a).Location()
	})
}

// FuzzRedact puts a password in a URL, alone or in an error message, and
// checks that Redact never returns it.
//
//	go test -run '^$' -fuzz FuzzRedact ./internal/repourl/
func FuzzRedact(f *testing.F) {
	f.Add("https", "user", "hunter22", "clone %s: exit 128")
	f.Add("ssh", "git", "p4ssw0rd!", "%s")
	f.Add("http", "", "ghp_0123456789", "fetch \"%s\"\n")
	f.Add("git+ssh", "a:b", "zzzzzzzz", "%s%s")
	f.Fuzz(func(t *testing.T, scheme, user, password, text string) {
		// Spaces and control characters end a URL in text: a "password"
		// after one is no URL's.
		if len(password) < 6 || strings.ContainsAny(password, "@/?#%[]\"'\\:") || strings.ContainsAny(user, "@/?#%[]\"'") ||
			strings.IndexFunc(user+password, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 ||
			!schemePattern.MatchString(strings.ToLower(scheme)+"://") || !strings.Contains(text, "%s") {
			return
		}
		u := scheme + "://" + user + ":" + password + "@example.com/org/repo.git"
		// The password must not already be in the text around the URL,
		// nor in the URL's other parts.
		around := strings.Replace(text, "%s", "", 1)
		if strings.Contains(around, password) || strings.Contains(scheme+user+"example.com/org/repo.git", password) {
			return
		}
		// The same with another password of the same length: the password
		// found in its redaction came from around the URL, not from it
		// (percent-encoding what follows the URL can spell it by chance:
		// "\x80" and "00000" after the URL become "%8000000").
		other := strings.Repeat("q", len(password))
		if other == password {
			other = strings.Repeat("z", len(password))
		}
		u2 := scheme + "://" + user + ":" + other + "@example.com/org/repo.git"
		for i, s := range []string{u, strings.Replace(text, "%s", u, 1)} {
			s2 := []string{u2, strings.Replace(text, "%s", u2, 1)}[i]
			if got := Redact(s); strings.Contains(got, password) && !strings.Contains(Redact(s2), password) {
				t.Fatalf("Redact(%q) = %q still holds the password", s, got)
			}
		}
	})
}
