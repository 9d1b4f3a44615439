// Package repourl is the one identity of a repository URL: how graphcd
// decides that two spellings name one repository, and how it prints a URL
// without the credentials it may carry. A webhook, a project's
// sourceRepos, a credential lookup, the repository server's caches and the
// application index all compare through it, so they cannot disagree.
//
// Two URLs are one repository, as in Argo CD, when they differ only in
// case, in an scp-like spelling ("git@host:org/repo" is
// "ssh://git@host/org/repo"), or in a trailing ".git" or "/". graphcd
// also ignores what cannot change the repository: HTTP user information
// (credentials), a port that is the scheme's default, a fragment, and "."
// or ".." in the path. The scheme and an SSH user name still
// count: "http://" and "https://" are two repositories to a credential
// lookup and a project rule. A webhook, which learns of a repository from
// a forge, compares a looser Location: host and path only.
package repourl

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// URL is a repository URL read once. The zero URL is the empty one.
type URL struct {
	raw string
	// scheme is lower case, "ssh" for scp-like URLs and git+ssh; "" when
	// raw is no URL, and text then holds its normal form.
	scheme, user, host, port, path string
	// query is "?" and the query when raw has one: in a sourceRepos
	// pattern, "?" is a wildcard.
	query string
	text  string
}

// schemePattern finds the "<scheme>://" that starts a URL.
var schemePattern = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://`)

// defaultPorts are the ports a URL may leave out.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ssh": "22"}

// Parse reads raw, which may also be a glob pattern ("https://github.com/org/*")
// or no URL at all: what does not parse is compared as lower-case text
// without a trailing "/" or ".git".
func Parse(raw string) URL {
	s := strings.ToLower(strings.TrimSpace(raw))
	u := URL{raw: raw}
	switch {
	case schemePattern.MatchString(s):
		p, err := url.Parse(s)
		if err != nil {
			break
		}
		u.scheme, u.host, u.port = p.Scheme, p.Hostname(), p.Port()
		if u.scheme == "git+ssh" || u.scheme == "ssh+git" {
			u.scheme = "ssh"
		}
		if p.User != nil && u.scheme != "http" && u.scheme != "https" {
			u.user = p.User.Username()
		}
		u.path = p.Path
		if p.ForceQuery || p.RawQuery != "" {
			u.query = "?" + p.RawQuery
		}
	case isSCPLike(s):
		hostPart, p, _ := strings.Cut(s, ":")
		if at := strings.LastIndexByte(hostPart, '@'); at >= 0 {
			u.user, hostPart = hostPart[:at], hostPart[at+1:]
		}
		u.scheme, u.host, u.path = "ssh", hostPart, p
	}
	if u.scheme == "" {
		u.text = trimRepo(s)
		return u
	}
	if defaultPorts[u.scheme] == u.port {
		u.port = ""
	}
	if u.path != "" {
		u.path = trimRepo(path.Clean("/" + u.path))
	}
	return u
}

// isSCPLike reports whether s is an scp-like SSH address such as
// "git@github.com:org/repo": no scheme, and a ":" before any "/".
func isSCPLike(s string) bool {
	host, _, ok := strings.Cut(s, ":")
	return ok && host != "" && !strings.ContainsAny(host, `/\`) && !strings.Contains(s, "://")
}

// trimRepo drops the trailing "/" and ".git" that do not change a
// repository.
func trimRepo(s string) string {
	s = strings.TrimRight(s, "/")
	s = strings.TrimSuffix(s, ".git")
	return strings.TrimRight(s, "/")
}

// Host is the URL's host name (lower case, without port or user); ""
// when raw is no URL.
func (u URL) Host() string { return u.host }

// Key is the form two URLs of one repository share, and the key of
// caches and lookups: "https://github.com/org/repo",
// "ssh://git@github.com/org/repo". It holds no credentials, so it may be
// printed.
func (u URL) Key() string {
	if u.scheme == "" {
		return u.text
	}
	var b strings.Builder
	b.WriteString(u.scheme + "://")
	if u.user != "" {
		b.WriteString(u.user + "@")
	}
	b.WriteString(u.host)
	if u.port != "" {
		b.WriteString(":" + u.port)
	}
	b.WriteString(u.path + u.query)
	return b.String()
}

// Same reports whether u and v name one repository. An empty URL is no
// repository.
func (u URL) Same(v URL) bool {
	k := u.Key()
	return k != "" && k == v.Key()
}

// Location is where a forge serves the repository, as a webhook names it:
// host and path, without scheme, user or port ("github.com/org/repo").
// Azure DevOps' SSH form (git@ssh.dev.azure.com:v3/org/project/repo) is
// given its HTTPS location (dev.azure.com/org/project/_git/repo). ok is
// false for what is no remote Git URL: a file:// URL, a path, a URL
// without host or path.
func (u URL) Location() (loc string, ok bool) {
	switch u.scheme {
	case "http", "https", "ssh", "git":
	default:
		return "", false
	}
	host, p := u.host, strings.TrimPrefix(u.path, "/")
	if host == "" || p == "" {
		return "", false
	}
	if host == "ssh.dev.azure.com" || host == "vs-ssh.visualstudio.com" {
		if parts := strings.Split(p, "/"); len(parts) == 4 && parts[0] == "v3" {
			host, p = "dev.azure.com", parts[1]+"/"+parts[2]+"/_git/"+parts[3]
		}
	}
	return host + "/" + p, true
}

// String is the URL as given, its credentials redacted, so that a URL
// printed with %s or %v never leaks them.
func (u URL) String() string { return Redact(u.raw) }

// Normalize is Parse(raw).Key().
func Normalize(raw string) string { return Parse(raw).Key() }

// Same reports whether the URLs a and b name one repository.
func Same(a, b string) bool { return Parse(a).Same(Parse(b)) }
