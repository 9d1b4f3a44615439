package oidc

import (
	"net/url"
	"path"
	"strings"
)

// maxReturnURL bounds a return URL; longer ones are not links users follow.
const maxReturnURL = 2048

// ReturnURL turns a user-supplied return URL into a path (with query and
// fragment) under the base URL, safe to redirect to. Anything that could
// lead elsewhere - another scheme or host, "//host", "/\host", control
// characters or whitespace browsers strip, encoded slashes or backslashes,
// ".." out of the base path - gives the base path instead. An absolute URL
// to graphcd itself is accepted and reduced to its path.
func (p *Provider) ReturnURL(raw string) string {
	if r, ok := returnPath(p.base, raw); ok {
		return r
	}
	return p.base.Path
}

func returnPath(base *url.URL, raw string) (string, bool) {
	if raw == "" || len(raw) > maxReturnURL {
		return "", false
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil {
		return "", false
	}
	if u.Scheme != "" || u.Host != "" {
		if !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) {
			return "", false
		}
	} else if !strings.HasPrefix(raw, "/") {
		return "", false
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	// Decoded, the path must still be a plain absolute path.
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") ||
		strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return "", false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	basePath := strings.TrimSuffix(base.Path, "/")
	if basePath != "" && clean != basePath && !strings.HasPrefix(clean, basePath+"/") {
		return "", false
	}
	out := url.URL{Path: clean, RawQuery: u.RawQuery, Fragment: u.Fragment}
	s := out.String()
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return "", false
	}
	return s, true
}
