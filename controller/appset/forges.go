package appset

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ForgePolicy says which forges the SCM provider and pull request
// generators may ask, as Argo CD's --enable-scm-providers and
// --allowed-scm-providers. A generator sends a token from a Secret of
// its set's namespace to the API it names, so an API a tenant chooses
// could collect that token: unlike Argo CD, whose empty list allows every
// URL, graphcd allows only the forges' public APIs until an admin lists
// others.
type ForgePolicy struct {
	// Disabled refuses the SCM provider and pull request generators.
	Disabled bool
	// Allowed are API URLs a spec's api may name besides the public
	// ones; each allows itself and the URLs under it.
	Allowed []string
}

// publicAPIs are the forges' own APIs, always allowed.
var publicAPIs = []string{"https://api.github.com/", "https://gitlab.com/", "https://api.bitbucket.org/", "https://gitea.com/"}

// check says whether the forge API at api may be asked.
func (p ForgePolicy) check(api string) error {
	if p.Disabled {
		return errors.New("SCM provider and pull request generators are disabled (--enable-scm-providers=false)")
	}
	u, err := url.Parse(api)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("api %q: not an http or https URL without credentials", api)
	}
	for _, allowed := range append(publicAPIs, p.Allowed...) {
		if under(u, allowed) {
			return nil
		}
	}
	return fmt.Errorf("api %s is not an allowed SCM provider: an admin lists it in --allowed-scm-providers", u.Redacted())
}

// under says whether u is allowed or a URL under it: same scheme and
// host, and a path at or below allowed's.
func under(u *url.URL, allowed string) bool {
	a, err := url.Parse(strings.TrimSpace(allowed))
	if err != nil || a.Host == "" {
		return false
	}
	if !strings.EqualFold(u.Scheme, a.Scheme) || !strings.EqualFold(u.Host, a.Host) {
		return false
	}
	prefix := strings.TrimSuffix(a.Path, "/")
	path := u.Path
	return path == prefix || strings.HasPrefix(path, prefix+"/") || prefix == ""
}
