package repourl

import (
	"net/url"
	"regexp"
	"strings"
)

// Mask replaces a credential in what Redact returns.
const Mask = "***"

// userinfoPattern finds "scheme://userinfo@" in free text: the userinfo
// runs to the last "@" before the host's end.
var userinfoPattern = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)([^/\s"'?#]*)@`)

// Redact hides the credentials in a URL, or in text that holds URLs such
// as an error message: the password of "user:password@", and for http(s)
// a user alone, which is often a token. SSH user names such as "git@" are
// kept: they are no secret and tell the reader which key was used.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || strings.ContainsAny(s, " \t\r\n") {
		return redactText(s)
	}
	if u.User == nil {
		return s
	}
	info, changed := redactUserinfo(u.Scheme, u.User.String())
	if !changed {
		return s
	}
	u.User = nil
	scheme := s[:len(u.Scheme)] // as written: url.Parse lower-cases it
	return scheme + "://" + info + "@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
}

// redactText redacts every "scheme://userinfo@" in s.
func redactText(s string) string {
	return userinfoPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := userinfoPattern.FindStringSubmatch(m)
		info, _ := redactUserinfo(strings.TrimSuffix(sub[1], "://"), sub[2])
		return sub[1] + info + "@"
	})
}

// redactUserinfo returns info, the user information of a URL with scheme,
// with its secret masked, and whether there was one.
func redactUserinfo(scheme, info string) (string, bool) {
	if user, _, ok := strings.Cut(info, ":"); ok {
		return user + ":" + Mask, true
	}
	if s := strings.ToLower(scheme); s == "http" || s == "https" {
		return Mask, true
	}
	return info, false
}
