package accounts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/graphcd/graphcd/internal/graphcdsecret"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// The objects accounts live in, in graphcd's namespace (Argo CD's
// argocd-cm, argocd-secret and argocd-initial-admin-secret).
const (
	ConfigMapName          = wellknown.SettingsConfigMap
	SecretName             = graphcdsecret.Name
	InitialAdminSecretName = "graphcd-initial-admin-secret" //nolint:gosec // a Secret's name, not a credential
)

// Admin is the name of the built-in account.
const Admin = "admin"

// Capability is what an account may do.
type Capability string

// The capabilities Argo CD defines.
const (
	// CapabilityLogin lets the account sign in with its password.
	CapabilityLogin Capability = "login"
	// CapabilityAPIKey lets the account hold API tokens.
	CapabilityAPIKey Capability = "apiKey"
)

// Token records an API token issued to an account; the token itself (a
// signed JWT) is never stored. The JSON shape is Argo CD's.
type Token struct {
	// ID is the token's jti: unique within the account.
	ID string `json:"id"`
	// IssuedAt is when the token was issued, in Unix seconds.
	IssuedAt int64 `json:"iat"`
	// ExpiresAt is when the token stops working, in Unix seconds; zero
	// means never.
	ExpiresAt int64 `json:"exp,omitempty"`
}

// Expired reports whether the token has expired at now.
func (t Token) Expired(now time.Time) bool {
	return t.ExpiresAt != 0 && now.Unix() >= t.ExpiresAt
}

// Account is a local account as declared in graphcd-cm and graphcd-secret.
// It never carries the password hash.
type Account struct {
	Name string
	// Enabled is false when graphcd-cm disables the account (or holds an
	// unreadable enabled flag: a typo never re-enables an account).
	Enabled      bool
	Capabilities []Capability
	// PasswordMtime is when the password last changed; the zero time when
	// it never did or the stored value is unreadable.
	PasswordMtime time.Time
	Tokens        []Token
	// HasPassword is true when a bcrypt hash is stored for the account.
	HasPassword bool
	// Problems describe malformed stored data (never its content). An
	// account with problems still works with what could be read.
	Problems []string
}

// HasCapability reports whether the account has c.
func (a Account) HasCapability(c Capability) bool {
	return slices.Contains(a.Capabilities, c)
}

// TokenValid reports whether a token (session or API token) issued at iat
// survives the account's last password change. JWT times have second
// precision, so a token issued in the same second as the change is refused:
// it may predate it. UpdatePassword returns only once that second is over,
// so sessions issued after it returns are valid.
func (a Account) TokenValid(iat time.Time) bool {
	return a.PasswordMtime.IsZero() || iat.Unix() > a.PasswordMtime.Unix()
}

// Token returns the account's token with id.
func (a Account) Token(id string) (Token, bool) {
	for _, t := range a.Tokens {
		if t.ID == id {
			return t, true
		}
	}
	return Token{}, false
}

func (a Account) clone() Account {
	a.Capabilities = slices.Clone(a.Capabilities)
	a.Tokens = slices.Clone(a.Tokens)
	a.Problems = slices.Clone(a.Problems)
	return a
}

// Keys of graphcd-cm and graphcd-secret.
const (
	accountsPrefix = "accounts."
	enabledSuffix  = ".enabled"
	adminEnabled   = "admin.enabled"
)

// passwordKey, mtimeKey and tokensKey name an account's keys in
// graphcd-secret: admin.* for the admin, accounts.<name>.* for the others.
func passwordKey(name string) string { return secretPrefix(name) + "password" }
func mtimeKey(name string) string    { return secretPrefix(name) + "passwordMtime" }
func tokensKey(name string) string   { return secretPrefix(name) + "tokens" }

func secretPrefix(name string) string {
	if name == Admin {
		return "admin."
	}
	return accountsPrefix + name + "."
}

// snapshot is what the store serves: accounts and, apart, their hashes.
type snapshot struct {
	accounts map[string]Account
	hashes   map[string][]byte
}

// parse reads the accounts out of graphcd-cm's and graphcd-secret's data.
// Either may be nil. Malformed values become problems of their account.
func parse(cm map[string]string, secret map[string][]byte) snapshot {
	type decl struct {
		caps     []Capability
		problems []string
		enabled  bool
		// unknown is set when only unknown capabilities are listed.
		unknown bool
	}
	decls := map[string]*decl{Admin: {enabled: true}}
	get := func(name string) *decl {
		d, ok := decls[name]
		if !ok {
			d = &decl{enabled: true}
			decls[name] = d
		}
		return d
	}
	setEnabled := func(d *decl, key, v string) {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			d.problems = append(d.problems, fmt.Sprintf("%s in %s is not a boolean; the account is disabled", key, ConfigMapName))
			on = false
		}
		d.enabled = d.enabled && on
	}
	for key, v := range cm {
		if key == adminEnabled {
			setEnabled(get(Admin), key, v)
			continue
		}
		rest, ok := strings.CutPrefix(key, accountsPrefix)
		if !ok {
			continue
		}
		if name, ok := strings.CutSuffix(rest, enabledSuffix); ok && validName(name) {
			setEnabled(get(name), key, v)
			continue
		}
		if !validName(rest) {
			continue // not an account key (accounts.<name>.<other> is not Argo CD's)
		}
		d := get(rest)
		for _, c := range strings.Split(v, ",") {
			switch c := Capability(strings.TrimSpace(c)); c {
			case "":
			case CapabilityLogin, CapabilityAPIKey:
				d.caps = append(d.caps, c)
			default:
				d.problems = append(d.problems, fmt.Sprintf("%s in %s: unknown capability %q ignored", key, ConfigMapName, c))
				d.unknown = true
			}
		}
	}

	snap := snapshot{accounts: map[string]Account{}, hashes: map[string][]byte{}}
	for name, d := range decls {
		caps := d.caps
		if name == Admin {
			caps = append(caps, CapabilityLogin)
		} else if len(caps) == 0 && !d.unknown {
			// An account with no capability listed can log in; one that
			// lists only unknown capabilities gets none.
			caps = append(caps, CapabilityLogin)
		}
		slices.Sort(caps)
		a := Account{
			Name:         name,
			Enabled:      d.enabled,
			Capabilities: slices.Compact(caps),
			Problems:     d.problems,
		}
		if h := secret[passwordKey(name)]; len(h) > 0 {
			if _, err := bcrypt.Cost(h); err != nil {
				a.Problems = append(a.Problems, fmt.Sprintf("%s in %s is not a bcrypt hash", passwordKey(name), SecretName))
			} else {
				a.HasPassword = true
				snap.hashes[name] = h
			}
		}
		if m := secret[mtimeKey(name)]; len(m) > 0 {
			t, err := time.Parse(time.RFC3339, string(m))
			if err != nil {
				a.Problems = append(a.Problems, fmt.Sprintf("%s in %s is not an RFC 3339 time", mtimeKey(name), SecretName))
			}
			a.PasswordMtime = t
		}
		tokens, err := parseTokens(secret[tokensKey(name)])
		if err != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("%s in %s: %v; the account has no tokens until it is fixed", tokensKey(name), SecretName, err))
		}
		a.Tokens = tokens
		slices.Sort(a.Problems)
		snap.accounts[name] = a
	}
	return snap
}

// parseTokens reads a tokens key: a JSON list of Token; empty means none.
func parseTokens(data []byte) ([]Token, error) {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, nil
	}
	var tokens []Token
	if err := json.Unmarshal(data, &tokens); err != nil {
		return nil, fmt.Errorf("not a JSON list of tokens")
	}
	seen := map[string]bool{}
	for _, t := range tokens {
		if t.ID == "" || seen[t.ID] {
			return nil, fmt.Errorf("a token has an empty or repeated id")
		}
		seen[t.ID] = true
	}
	return tokens, nil
}

// validName reports whether name can be an account name: the keys split on
// dots, so names have none.
func validName(name string) bool {
	return name != "" && !strings.ContainsAny(name, ". \t\n")
}
