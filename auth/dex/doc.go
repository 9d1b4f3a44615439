// Package dex runs Dex (github.com/dexidp/dex) inside graphcd, as Argo CD
// does, so that users log in with their existing identity providers.
//
// Dex is served under the graphcd URL at /api/dex, which is also its
// issuer. Users configure it with the dex.config key of graphcd-cm, in
// Dex's own format; values written "$key" come from graphcd-secret and
// "$secret:key" from the Secret named secret:
//
//	dex.config: |
//	  connectors:
//	  - type: github
//	    id: github
//	    name: GitHub
//	    config:
//	      clientID: 0a1b2c3d
//	      clientSecret: $dex.github.clientSecret
//	      orgs:
//	      - name: my-org
//	  enablePasswordDB: true
//	  staticPasswords:
//	  - email: admin@example.com
//	    hash: "$2a$10$..."   # bcrypt; not a secret reference
//	    username: admin
//	    userID: 08a8684b-db88-4b73-90a9-3cd1661f5466
//	    groups: [ops]
//
// A connector's redirectURI defaults to <url>/api/dex/callback, the
// address to register at the upstream provider.
//
// graphcd registers itself as Dex's client (ID "graphcd", redirect
// <url>/auth/callback) and registers a public client "graphcd-cli" for
// command-line logins through a loopback redirect; staticClients in
// dex.config are kept beside them. Approval screens are skipped unless
// oauth2.skipApprovalScreen is false.
//
// Wiring:
//
//	cfg, err := dex.ParseConfig(cm.Data["dex.config"], secrets.Lookup)
//	srv, err := dex.New(ctx, cfg, dex.Options{
//		Issuer: url + "/api/dex",
//		Client: dex.ClientRegistration{RedirectURIs: []string{url + "/auth/callback"}},
//	})
//	mux.Handle("/api/dex/", srv.Handler())
//
// Dex keeps its state in memory by default, which suits one replica.
// Several replicas share it through Dex's Kubernetes CRD storage
// (Options.Storage.Kubernetes), and then must share the client secret.
package dex
