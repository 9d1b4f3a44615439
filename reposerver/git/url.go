package git

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/graphcd/graphcd/internal/repourl"
)

// ErrUnsafeURL is returned for repository URLs that are refused before any
// network access: transport tricks, option injection, unsupported schemes,
// and local paths unless Options.AllowFileURLs.
var ErrUnsafeURL = errors.New("unsafe repository URL")

// ErrInvalidRevision is returned for revisions that cannot be used safely.
var ErrInvalidRevision = errors.New("invalid revision")

type urlKind int

const (
	kindHTTP urlKind = iota + 1
	kindSSH
	kindFile
)

// endpoint is a validated repository URL.
type endpoint struct {
	kind urlKind
	// fetchURL is what go-git connects to: no HTTP userinfo, scp-style
	// URLs kept as they were given.
	fetchURL string
	// normalized identifies the repository for caches and working copies
	// (repourl's key).
	normalized string
	// base is what relative submodule URLs resolve against: fetchURL, an
	// scp-style one written as ssh://.
	base string
	// host is lower-case host[:port], used to decide whether a submodule
	// may receive the parent's credentials.
	host string
	// user and password come from the URL's userinfo (HTTP only for the
	// password; the SSH user name is kept in fetchURL).
	user, password string
	hasUserinfo    bool
}

var (
	// "<transport>::<address>" is git's remote-helper syntax (ext::, fd::).
	remoteHelperPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*::`)
	schemePattern       = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)
	scpPattern          = regexp.MustCompile(`^(?:([^@/:\s]+)@)?([^@/:\s\[\]]+|\[[0-9A-Fa-f:.]+\]):(.*)$`)
	hexPattern          = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// injectionMarkers are option-injection payloads refused anywhere in a URL.
var injectionMarkers = []string{"--upload-pack", "--receive-pack", "--config", "-oproxycommand", "--exec"}

// parseURL validates raw and describes it. Errors never contain raw's
// credentials.
func parseURL(raw string, allowFile bool) (*endpoint, error) {
	safe := repourl.Redact(raw)
	refuse := func(why string) (*endpoint, error) {
		return nil, fmt.Errorf("%w %q: %s", ErrUnsafeURL, safe, why)
	}
	switch {
	case raw == "":
		return refuse("empty")
	case len(raw) > 2048:
		return refuse("too long")
	case strings.HasPrefix(raw, "-"):
		return refuse("starts with '-'")
	case strings.IndexFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return refuse("contains control characters")
	case remoteHelperPattern.MatchString(raw):
		return refuse("remote helper transports (<transport>::) are not allowed")
	}
	lower := strings.ToLower(raw)
	for _, m := range injectionMarkers {
		if strings.Contains(lower, m) {
			return refuse("contains option injection " + m)
		}
	}

	if m := schemePattern.FindStringSubmatch(raw); m != nil {
		scheme := strings.ToLower(m[1])
		u, err := url.Parse(raw)
		if err != nil {
			return refuse("malformed URL")
		}
		switch scheme {
		case "http", "https":
			return parseHTTP(u, scheme, refuse)
		case "ssh", "git+ssh", "ssh+git":
			return parseSSH(u.User, u.Host, u.Path, refuse)
		case "file":
			if !allowFile {
				return refuse("file:// URLs are not allowed")
			}
			if u.Host != "" && u.Host != "localhost" {
				return refuse("file:// URL with a host")
			}
			return fileEndpoint(u.Path, refuse)
		default:
			return refuse("scheme " + scheme + " is not supported")
		}
	}

	// A local path ("/srv/repo", "./repo", "C:\\repo") unless it is scp-like.
	if strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, ".") || filepath.IsAbs(raw) {
		if !allowFile {
			return refuse("local paths are not allowed")
		}
		return fileEndpoint(raw, refuse)
	}
	if m := scpPattern.FindStringSubmatch(raw); m != nil {
		user := m[1]
		var ui *url.Userinfo
		if user != "" {
			ui = url.User(user)
		}
		p := m[3]
		if strings.HasPrefix(p, "//") {
			return refuse("malformed scp-style path")
		}
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		ep, err := parseSSH(ui, m[2], p, refuse)
		if err != nil {
			return nil, err
		}
		ep.fetchURL = raw
		return ep, nil
	}
	if !allowFile {
		return refuse("not a URL (local paths are not allowed)")
	}
	return fileEndpoint(raw, refuse)
}

func parseHTTP(u *url.URL, scheme string, refuse func(string) (*endpoint, error)) (*endpoint, error) {
	if u.Host == "" || strings.HasPrefix(u.Hostname(), "-") {
		return refuse("missing or invalid host")
	}
	ep := &endpoint{kind: kindHTTP, host: strings.ToLower(u.Host)}
	if u.User != nil {
		ep.hasUserinfo = true
		ep.user = u.User.Username()
		ep.password, _ = u.User.Password()
	}
	clean := *u
	clean.User = nil
	clean.Scheme = scheme
	clean.Host = ep.host
	clean.Fragment = ""
	clean.RawFragment = ""
	ep.fetchURL = clean.String()
	ep.base = ep.fetchURL
	ep.normalized = repourl.Normalize(ep.fetchURL)
	return ep, nil
}

func parseSSH(user *url.Userinfo, host, p string, refuse func(string) (*endpoint, error)) (*endpoint, error) {
	hostname := host
	if h, _, ok := strings.Cut(strings.TrimPrefix(host, "["), "]"); ok && strings.HasPrefix(host, "[") {
		hostname = h
	} else if h, _, ok := strings.Cut(host, ":"); ok {
		hostname = h
	}
	if hostname == "" || strings.HasPrefix(hostname, "-") {
		return refuse("missing or invalid host")
	}
	name := ""
	if user != nil {
		if _, hasPass := user.Password(); hasPass {
			return refuse("passwords in ssh URLs are not allowed")
		}
		name = user.Username()
		if strings.HasPrefix(name, "-") {
			return refuse("invalid user")
		}
	}
	ep := &endpoint{kind: kindSSH, host: strings.ToLower(host), user: name}
	u := url.URL{Scheme: "ssh", Host: ep.host, Path: p}
	if name != "" {
		u.User = url.User(name)
	}
	ep.fetchURL = u.String()
	ep.base = ep.fetchURL
	ep.normalized = repourl.Normalize(ep.fetchURL)
	return ep, nil
}

func fileEndpoint(p string, refuse func(string) (*endpoint, error)) (*endpoint, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return refuse("invalid local path")
	}
	fetch := "file://" + filepath.ToSlash(abs)
	return &endpoint{kind: kindFile, fetchURL: fetch, base: fetch, normalized: repourl.Normalize(fetch)}, nil
}

// validateRevision refuses revisions that could be read as options or that
// carry control characters.
func validateRevision(rev string) error {
	switch {
	case strings.HasPrefix(rev, "-"):
		return fmt.Errorf("%w %q: starts with '-'", ErrInvalidRevision, rev)
	case len(rev) > 512:
		return fmt.Errorf("%w: longer than 512 bytes", ErrInvalidRevision)
	case strings.IndexFunc(rev, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return fmt.Errorf("%w %q: contains control characters", ErrInvalidRevision, rev)
	case strings.Contains(rev, ".."), strings.Contains(rev, "@{"):
		return fmt.Errorf("%w %q: revision ranges and reflog syntax are not supported", ErrInvalidRevision, rev)
	}
	return nil
}

// isFullSHA reports whether s is a 40-hex commit id.
func isFullSHA(s string) bool { return len(s) == 40 && hexPattern.MatchString(s) }

// isShortSHA reports whether s could be an abbreviated commit id.
func isShortSHA(s string) bool { return len(s) >= 4 && len(s) < 40 && hexPattern.MatchString(s) }
