package oidc

import (
	"net/url"
	"strings"
	"testing"
)

func TestReturnURL(t *testing.T) {
	for _, base := range []string{"https://cd.example.com", "https://cd.example.com/graphcd/"} {
		b, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		p := &Provider{base: b}
		if b.Path == "" {
			b.Path = "/"
		}
		under := func(s string) string {
			if b.Path == "/" {
				return s
			}
			return "/graphcd" + s
		}
		accepted := map[string]string{
			under("/applications"):                                under("/applications"),
			under("/applications?proj=a&x=1#tree"):                under("/applications?proj=a&x=1#tree"),
			under("/a/./b/"):                                      under("/a/b/"),
			"https://cd.example.com" + under("/settings?tab=sso"): under("/settings?tab=sso"),
			"HTTPS://CD.EXAMPLE.COM" + under("/x"):                under("/x"),
		}
		for raw, want := range accepted {
			if got := p.ReturnURL(raw); got != want {
				t.Errorf("base %s: ReturnURL(%q) = %q, want %q", base, raw, got, want)
			}
		}
		rejected := []string{
			"",
			"https://evil.example",
			"https://evil.example" + under("/applications"),
			"http://cd.example.com" + under("/x"), // https downgraded
			"https://cd.example.com.evil.example/",
			"https://cd.example.com@evil.example/",
			"https://cd.example.com:8443/",
			"https:evil.example",
			"//evil.example",
			"//evil.example" + under("/"),
			"///evil.example",
			`/\evil.example`,
			`\\evil.example`,
			`/` + "\t" + `/evil.example`,
			"/\n/evil.example",
			" /applications",
			"javascript:alert(1)",
			"JavaScript:alert(1)",
			"data:text/html,<script>alert(1)</script>",
			"%2F%2Fevil.example",
			"/%2F/evil.example",
			"/%2f%2fevil.example",
			"/%5Cevil.example",
			"/%0d%0aSet-Cookie:a=b",
			"evil.example",
			"applications",
			"https://cd.example.com//evil.example",
		}
		if b.Path != "/" {
			rejected = append(rejected, "/graphcd/../../evil", "/graphcdx/applications", "/applications", "/graphcd/../applications")
		}
		for _, raw := range rejected {
			if got := p.ReturnURL(raw); got != b.Path {
				t.Errorf("base %s: ReturnURL(%q) = %q, want the base path %q", base, raw, got, b.Path)
			}
		}
	}
}

// FuzzReturnURL checks that whatever comes in, what comes out is a path
// under the base that a browser resolves to the base's host.
func FuzzReturnURL(f *testing.F) {
	for _, s := range []string{"/a", "//evil", `/\evil`, "https://cd.example.com/graphcd/x", "/graphcd/%2F%2Fx", "/graphcd/..%2F..%2Fx"} {
		f.Add(s)
	}
	base, err := url.Parse("https://cd.example.com/graphcd/")
	if err != nil {
		f.Fatal(err)
	}
	p := &Provider{base: base}
	f.Fuzz(func(t *testing.T, raw string) {
		got := p.ReturnURL(raw)
		ref, err := url.Parse(got)
		if err != nil {
			t.Fatalf("ReturnURL(%q) = %q, not a URL: %v", raw, got, err)
		}
		abs := base.ResolveReference(ref)
		if abs.Scheme != base.Scheme || abs.Host != base.Host {
			t.Fatalf("ReturnURL(%q) = %q leads to %s", raw, got, abs)
		}
		if ref.Path != "/graphcd" && !strings.HasPrefix(ref.Path, "/graphcd/") {
			t.Fatalf("ReturnURL(%q) = %q, not under the base path", raw, got)
		}
		// Browsers read a backslash as a slash and drop tabs and newlines.
		if strings.ContainsAny(got, "\\\t\r\n") {
			t.Fatalf("ReturnURL(%q) = %q has characters browsers rewrite", raw, got)
		}
	})
}
