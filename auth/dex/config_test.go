package dex

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
)

// secrets is a lookup over a fixed set of Secrets.
func secrets(data map[string]map[string]string) func(secret, key string) (string, error) {
	return func(secret, key string) (string, error) {
		s, ok := data[secret]
		if !ok {
			return "", errors.New("secret not found")
		}
		v, ok := s[key]
		if !ok {
			return "", errors.New("key not found")
		}
		return v, nil
	}
}

func testHash(t testing.TB) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte("password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func TestParseConfigSubstitutesSecrets(t *testing.T) {
	hash := testHash(t)
	doc := `
connectors:
- type: oidc
  id: corp
  name: Corp SSO
  config:
    issuer: https://sso.example.com
    clientID: $corp-sso:client-id
    clientSecret: $oidc.corp.clientSecret
    redirectURI: https://cd.example.com/api/dex/callback
    scopes: [profile, email, groups]
enablePasswordDB: true
staticPasswords:
- email: admin@example.com
  hash: "` + hash + `"
  username: admin
  userID: "08a8684b-db88-4b73-90a9-3cd1661f5466"
  groups: [ops]
staticClients:
- id: grafana
  name: Grafana
  secret: $grafana-client-secret
  redirectURIs: [https://grafana.example.com/login/generic_oauth]
oauth2:
  skipApprovalScreen: false
`
	lookup := secrets(map[string]map[string]string{
		DefaultSecret: {"oidc.corp.clientSecret": "s3cr3t-corp", "grafana-client-secret": "s3cr3t-grafana"},
		"corp-sso":    {"client-id": "graphcd-at-corp"},
	})
	c, err := ParseConfig(doc, lookup)
	if err != nil {
		t.Fatal(err)
	}
	var corp map[string]any
	if err := json.Unmarshal(c.Connectors[0].Config, &corp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(corp["clientID"], "graphcd-at-corp"); diff != "" {
		t.Errorf("clientID (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(corp["clientSecret"], "s3cr3t-corp"); diff != "" {
		t.Errorf("clientSecret (-got +want):\n%s", diff)
	}
	if got := c.StaticClients[0].Secret; got != "s3cr3t-grafana" {
		t.Errorf("staticClients[0].secret = %q, want the secret's value", got)
	}
	// A bcrypt hash starts with "$" but is not a reference.
	if got := string(c.StaticPasswords[0].Hash); got != hash {
		t.Errorf("hash = %q, want %q", got, hash)
	}
	if diff := cmp.Diff(c.StaticPasswords[0].Groups, []string{"ops"}); diff != "" {
		t.Errorf("groups (-got +want):\n%s", diff)
	}
	if c.OAuth2.SkipApprovalScreen == nil || *c.OAuth2.SkipApprovalScreen {
		t.Errorf("oauth2.skipApprovalScreen = %v, want explicit false", c.OAuth2.SkipApprovalScreen)
	}
	if diff := cmp.Diff(c.ConnectorNames(), []string{"Corp SSO", "Email"}); diff != "" {
		t.Errorf("ConnectorNames (-got +want):\n%s", diff)
	}
}

func TestParseConfigErrors(t *testing.T) {
	hash := testHash(t)
	lookup := secrets(map[string]map[string]string{DefaultSecret: {"k": "v4lue-that-is-secret"}})
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not yaml", "connectors: [", "dex.config: yaml:"},
		{"not a mapping", "- a\n- b", "not a mapping"},
		{"unknown connector", "connectors: [{type: nope, id: a, name: A, config: {}}]", `connectors[0].type: unknown connector type "nope"`},
		{"connector without id", "connectors: [{type: oidc, name: A, config: {}}]", "connectors[0].id: required"},
		{"connector without config", "connectors: [{type: oidc, id: a, name: A}]", "connectors[0].config: required"},
		{"duplicate connector", "connectors: [{type: mockCallback, id: a, name: A, config: {}}, {type: mockCallback, id: a, name: B, config: {}}]", `connectors[1].id: "a" used twice`},
		{"wrong type in connector", "connectors: [{type: oidc, id: a, name: A, config: {scopes: 3}}]", "connectors[0].config: scopes: want []string, got number"},
		{"missing secret", "connectors: [{type: oidc, id: a, name: A, config: {clientSecret: $nope}}]", "connectors[0].config.clientSecret: read secret graphcd-secret key nope: key not found"},
		{"missing named secret", "staticClients: [{id: a, name: A, secret: $other:k}]", "read secret other key k: secret not found"},
		{"passwords without db", "staticPasswords: [{email: a@b.c, hash: '" + hash + "', userID: x}]", "needs enablePasswordDB"},
		{"bad hash", "enablePasswordDB: true\nstaticPasswords: [{email: a@b.c, hash: plain, userID: x}]", "staticPasswords[0].hash: not a bcrypt hash"},
		{"no user id", "enablePasswordDB: true\nstaticPasswords: [{email: a@b.c, hash: '" + hash + "'}]", "staticPasswords[0].userID: required"},
		{"client without secret", "staticClients: [{id: a, name: A}]", "staticClients[0].secret: required unless public"},
		{"non-string key", "connectors: [{type: oidc, id: a, name: A, config: {1: x}}]", "keys must be strings"},
		{"nan", "connectors: [{type: oidc, id: a, name: A, config: {x: .nan}}]", "not a finite number"},
		{"password connector", "oauth2: {passwordConnector: ldap}", `oauth2.passwordConnector: no connector "ldap"`},
		{"wrong top-level type", "enablePasswordDB: [1]", "enablePasswordDB: want bool, got array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig(tc.doc, lookup)
			if err == nil {
				t.Fatalf("ParseConfig: no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseConfig error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseConfigKeepsSecretsOutOfErrors substitutes a secret into a field
// of the wrong type: the error names the field but not the value.
func TestParseConfigKeepsSecretsOutOfErrors(t *testing.T) {
	const value = "hunter2-very-secret"
	lookup := secrets(map[string]map[string]string{DefaultSecret: {"k": value}})
	for _, doc := range []string{
		"connectors: [{type: oidc, id: a, name: A, config: {scopes: $k}}]",
		"enablePasswordDB: $k",
		"connectors: [{type: oidc, id: $k, name: A, config: {}}, {type: oidc, id: $k, name: B, config: {}}]",
	} {
		_, err := ParseConfig(doc, lookup)
		if err == nil {
			t.Fatalf("ParseConfig(%q): no error", doc)
		}
		if strings.Contains(err.Error(), value) {
			t.Errorf("ParseConfig(%q) error %q carries the secret", doc, err)
		}
	}
}

func TestParseConfigEmpty(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "{}"} {
		c, err := ParseConfig(doc, nil)
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", doc, err)
		}
		if len(c.Connectors)+len(c.StaticClients)+len(c.StaticPasswords) != 0 || c.EnablePasswordDB {
			t.Errorf("ParseConfig(%q) = %+v, want an empty config", doc, c)
		}
	}
}

// FuzzParseConfig feeds hostile documents: ParseConfig must return, never
// panic, and never let a looked-up value into an error.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"connectors: [{type: oidc, id: a, name: A, config: {clientSecret: $k, issuer: $s:k}}]",
		"enablePasswordDB: true\nstaticPasswords: [{email: a, hash: $k, userID: u}]",
		"staticClients: [{id: $k, name: n, public: true}]",
		"a: &a [*a]",
		"a: &a [x, x]\nb: [*a, *a, *a]",
		"connectors: [{type: ldap, id: l, name: L, config: {host: $k, bindPW: 3}}]",
		"connectors: [{type: saml, id: s, name: S, config: {ssoURL: $k}}]",
		"oauth2: {skipApprovalScreen: $k}",
		"? [a]\n: b",
		"{{{",
	} {
		f.Add(seed)
	}
	const value = "zq-fuzz-secret-value"
	lookup := func(secret, key string) (string, error) {
		if key == "missing" {
			return "", errors.New("key not found")
		}
		return value, nil
	}
	f.Fuzz(func(t *testing.T, doc string) {
		c, err := ParseConfig(doc, lookup)
		if err != nil {
			if strings.Contains(err.Error(), value) {
				t.Fatalf("error %q carries the secret", err)
			}
			return
		}
		if c == nil {
			t.Fatal("nil config without an error")
		}
	})
}
