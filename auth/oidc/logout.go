package oidc

import (
	"context"
	"net/http"
	"net/url"
)

// LogoutHandler serves /auth/logout (GET or POST): clear ends graphcd's
// own session (the session package's job), then the browser goes to the
// provider's logout page if there is one (EndSessionURL), else to the base
// path. The target never comes from the request.
func (p *Provider) LogoutHandler(clear func(w http.ResponseWriter, r *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, POST")
			plain(w, http.StatusMethodNotAllowed, "Method not allowed.\n")
			return
		}
		clear(w, r)
		target := p.EndSessionURL(r.Context())
		if target == "" {
			target = p.base.Path
		}
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, target, http.StatusSeeOther)
	})
}

// EndSessionURL is where to send a browser to log out of the provider too,
// coming back to the base URL: Options.LogoutURL, or the discovery
// document's end_session_endpoint (RP-initiated logout; the base URL must
// be registered as a post-logout redirect URI). It is "" when the provider
// has neither, or cannot be reached.
func (p *Provider) EndSessionURL(ctx context.Context) string {
	back := p.base.String()
	if p.o.LogoutURL != "" {
		return logoutURL(p.o.LogoutURL, back)
	}
	d, err := p.discover(ctx)
	if err != nil {
		return ""
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := d.provider.Claims(&meta); err != nil || meta.EndSession == "" {
		return ""
	}
	u, err := url.Parse(meta.EndSession)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	q := u.Query()
	q.Set("client_id", p.o.ClientID)
	q.Set("post_logout_redirect_uri", back)
	u.RawQuery = q.Encode()
	return u.String()
}
