// Package oidc makes graphcd an OpenID Connect relying party: of its
// embedded Dex (package dex), or directly of an external provider
// configured with oidc.config.
//
// A browser login is an authorization code flow with PKCE:
//
//	p, err := oidc.NewProvider(ctx, oidc.Options{
//		Issuer:       url + "/api/dex",
//		ClientID:     "graphcd",
//		ClientSecret: dexServer.Client().Secret,
//		RedirectURL:  url + "/auth/callback",
//		BaseURL:      url,
//		CookieKey:    serverSecretKey,
//	})
//	mux.Handle("GET /auth/login", p.LoginHandler())
//	mux.Handle("GET /auth/callback", p.CallbackHandler(
//		func(w http.ResponseWriter, r *http.Request, id oidc.Identity, returnURL string) {
//			// mint graphcd's session for id, then
//			http.Redirect(w, r, returnURL, http.StatusFound)
//		}))
//
// GET /auth/login?return_url=/applications stores a random state, a nonce,
// the PKCE verifier and the return URL in a sealed (AES-GCM), HttpOnly,
// SameSite=Lax cookie that lives ten minutes and is sent only to the
// callback, then redirects to the provider. The callback accepts a state
// once and only with its cookie, exchanges the code with the verifier, and
// verifies the ID token: signature, issuer, expiry, audience (a token the
// same issuer minted for another client is refused) and nonce. The user's
// groups come from the "groups" claim (Options.GroupsClaim) and feed RBAC.
//
// One browser has one login in progress: starting another (a second tab)
// replaces the first one's cookie, and the first callback then fails with
// "start again".
//
// Return URLs are reduced to a path under the base URL (ReturnURL); any
// other target becomes the base path, so the login cannot redirect off
// graphcd. Failures answer a fixed plain-text page that never repeats the
// request; causes go to the logger without codes, tokens or secrets.
//
// An external provider used without Dex is configured with oidc.config in
// Argo CD's format (ParseConfig, Config.Options). LogoutHandler serves
// /auth/logout: it lets the session package clear graphcd's session, then
// sends the browser to the provider's logout page when there is one.
//
// The CLI logs in with LoopbackLogin (or StartLogin and FinishLogin), with
// a redirect to http://127.0.0.1:<port>/auth/callback and the embedded
// Dex's public client "graphcd-cli"; asking for the scope
// "audience:server:client_id:graphcd" gets an ID token that graphcd's own
// Provider.Verify accepts.
//
// Discovery is lazy: a Provider can be created before its provider serves
// (the embedded Dex is served by the same process), and each login retries
// discovery until it succeeds.
package oidc
