// Package names turns forge and cluster names into the forms Argo CD's
// generators give them: DNS-1123 names (normalize) and slugs (slugify),
// for every generator and template function to share one rule.
package names

import (
	"regexp"
	"strings"
)

var nonDNS = regexp.MustCompile(`[^a-z0-9.-]+`)

// Normalize makes s a DNS-1123 subdomain, as Argo CD's normalize does:
// lower case, other characters to "-", at most 253 characters.
func Normalize(s string) string {
	s = nonDNS.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.Trim(s, "-.")
	if len(s) > 253 {
		s = strings.Trim(s[:253], "-.")
	}
	return s
}

var nonSlug = regexp.MustCompile(`[^a-z0-9-]+`)

// SlugLength is the length Argo CD cuts slugs to by default: a branch
// slug leaves room in a 63-character DNS label for a suffix.
const SlugLength = 50

// Slug is Argo CD's slugify: lower case, runs of other characters to one
// "-", cut to n characters, at a word boundary when smart.
func Slug(s string, n int, smart bool) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > n {
		cut := s[:n]
		if i := strings.LastIndexByte(cut, '-'); smart && i > 0 {
			cut = cut[:i]
		}
		s = strings.Trim(cut, "-")
	}
	return s
}
