package kustomize

import (
	"regexp"
	"strings"
	"testing"
)

// urlScheme matches text that ends in a URL scheme.
var urlScheme = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*$`)

// FuzzParseRemote reads arbitrary remote entries of a kustomization, with
// a password in the URL's user information: nothing panics, a parsed
// remote names a repository or a file, and no error quotes the password.
//
//	go test -run '^$' -fuzz FuzzParseRemote ./reposerver/render/kustomize/
func FuzzParseRemote(f *testing.F) {
	f.Add("git::https", "tok-0123456789", "github.com/org/repo//base?ref=v1")
	f.Add("file", "tok-0123456789", "/etc/passwd")
	f.Add("https", "tok-0123456789", "host/a.git/b?ref=%zz")
	f.Add("ssh", "tok-0123456789", "host:org/repo.git//x?version=main&ref=")
	f.Add("HTTP", "tok-0123456789", "//")
	f.Fuzz(func(t *testing.T, scheme, password, rest string) {
		if len(password) < 10 || strings.ContainsAny(password, "@/?#%:[] \t\r\n\"\\") || strings.Contains(scheme+rest, password) || !urlScheme.MatchString(scheme) {
			return
		}
		ref := scheme + "://user:" + password + "@" + rest
		r, err := ParseRemote(ref)
		if err != nil {
			if strings.Contains(err.Error(), password) {
				t.Fatalf("ParseRemote(%q): the error quotes the password: %v", ref, err)
			}
			return
		}
		if !r.File && r.RepoURL == "" {
			t.Fatalf("ParseRemote(%q) = %+v: neither a file nor a repository", ref, r)
		}
		if r.Ref != ref {
			t.Fatalf("ParseRemote(%q) kept the entry as %q", ref, r.Ref)
		}
	})
}
