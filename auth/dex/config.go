package dex

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/dexidp/dex/server"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// DefaultSecret is the Secret that a "$key" reference (without a Secret
// name) reads from.
const DefaultSecret = wellknown.Secret

// MaxConfigSize bounds dex.config: a settings value, not a data file.
const MaxConfigSize = 1 << 20

// Config is the part of Dex's configuration that graphcd users write in
// dex.config. Issuer, storage, web and the graphcd client itself come from
// graphcd, not from here. Values may hold secrets: log Config only through
// its LogValue, which names connectors and clients and nothing else.
type Config struct {
	// Connectors are upstream identity providers, in Dex's own format.
	Connectors []Connector
	// EnablePasswordDB turns on Dex's local email/password connector.
	EnablePasswordDB bool
	// StaticPasswords are the users of the local connector.
	StaticPasswords []StaticPassword
	// StaticClients are OAuth2 clients registered beside graphcd's own.
	StaticClients []Client
	// OAuth2 tunes Dex's OAuth2 behaviour.
	OAuth2 OAuth2
}

// Connector is one Dex connector.
type Connector struct {
	Type string
	ID   string
	Name string
	// Config is the connector's config as JSON, secrets substituted.
	Config json.RawMessage
}

// StaticPassword is one user of Dex's local connector.
type StaticPassword struct {
	Email    string
	Hash     []byte // bcrypt
	Username string
	UserID   string
	Groups   []string
}

// Client is an OAuth2 client registered in Dex.
type Client struct {
	ID           string
	Secret       string
	Name         string
	RedirectURIs []string
	TrustedPeers []string
	Public       bool
}

// OAuth2 holds Dex's oauth2 settings that graphcd lets users change.
type OAuth2 struct {
	// SkipApprovalScreen defaults to true: graphcd is a first-party client.
	SkipApprovalScreen    *bool
	AlwaysShowLoginScreen bool
	PasswordConnector     string
}

// LogValue describes c without any value that may be a secret.
func (c *Config) LogValue() slog.Value {
	if c == nil {
		return slog.StringValue("<nil>")
	}
	ids := func(n int, id func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	return slog.GroupValue(
		slog.Any("connectors", ids(len(c.Connectors), func(i int) string { return c.Connectors[i].Type + "/" + c.Connectors[i].ID })),
		slog.Bool("enablePasswordDB", c.EnablePasswordDB),
		slog.Int("staticPasswords", len(c.StaticPasswords)),
		slog.Any("staticClients", ids(len(c.StaticClients), func(i int) string { return c.StaticClients[i].ID })),
	)
}

// ConnectorNames lists the display names of the login options, in order,
// as the public settings show them.
func (c *Config) ConnectorNames() []string {
	var names []string
	for _, k := range c.Connectors {
		names = append(names, k.Name)
	}
	if c.EnablePasswordDB {
		names = append(names, "Email")
	}
	return names
}

// rawConfig mirrors the YAML document Dex documents, as far as graphcd
// accepts it.
type rawConfig struct {
	Connectors []struct {
		Type   string          `json:"type"`
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Config json.RawMessage `json:"config"`
	} `json:"connectors"`
	EnablePasswordDB bool `json:"enablePasswordDB"`
	StaticPasswords  []struct {
		Email    string   `json:"email"`
		Hash     string   `json:"hash"`
		Username string   `json:"username"`
		UserID   string   `json:"userID"`
		Groups   []string `json:"groups"`
	} `json:"staticPasswords"`
	StaticClients []struct {
		ID           string   `json:"id"`
		Secret       string   `json:"secret"`
		Name         string   `json:"name"`
		RedirectURIs []string `json:"redirectURIs"`
		TrustedPeers []string `json:"trustedPeers"`
		Public       bool     `json:"public"`
	} `json:"staticClients"`
	OAuth2 struct {
		SkipApprovalScreen    *bool  `json:"skipApprovalScreen"`
		AlwaysShowLoginScreen bool   `json:"alwaysShowLoginScreen"`
		PasswordConnector     string `json:"passwordConnector"`
	} `json:"oauth2"`
}

// secretRef matches a whole value that names a secret: "$key" or
// "$secret:key". Secret names are DNS subdomains and keys are Secret data
// keys, so values such as bcrypt hashes ("$2a$10$...") never match.
var secretRef = regexp.MustCompile(`^\$(?:([a-z0-9]([-a-z0-9.]*[a-z0-9])?):)?([-._a-zA-Z0-9]+)$`)

// ParseConfig parses dex.config. String values of the form "$key" are
// replaced by key of DefaultSecret, and "$secret:key" by key of Secret
// secret, both read through lookup. Errors name the field that is wrong and
// never carry a substituted value.
func ParseConfig(doc string, lookup func(secret, key string) (string, error)) (*Config, error) {
	if len(doc) > MaxConfigSize {
		return nil, fmt.Errorf("dex.config: larger than %d bytes", MaxConfigSize)
	}
	var tree any
	if err := yaml.Unmarshal([]byte(doc), &tree); err != nil {
		return nil, fmt.Errorf("dex.config: %w", err)
	}
	if tree == nil {
		return &Config{}, nil
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, errors.New("dex.config: not a mapping")
	}
	r := &resolver{lookup: lookup}
	tree, err := r.walk("", tree)
	if err != nil {
		return nil, r.redact(fmt.Errorf("dex.config: %w", err))
	}
	data, err := json.Marshal(tree)
	if err != nil {
		return nil, r.redact(fmt.Errorf("dex.config: %w", err))
	}
	var raw rawConfig
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, r.redact(fmt.Errorf("dex.config: %s", describeJSONError(err)))
	}
	c, err := convert(&raw)
	if err != nil {
		return nil, r.redact(fmt.Errorf("dex.config: %w", err))
	}
	return c, nil
}

func convert(raw *rawConfig) (*Config, error) {
	c := &Config{
		EnablePasswordDB: raw.EnablePasswordDB,
		OAuth2: OAuth2{
			SkipApprovalScreen:    raw.OAuth2.SkipApprovalScreen,
			AlwaysShowLoginScreen: raw.OAuth2.AlwaysShowLoginScreen,
			PasswordConnector:     raw.OAuth2.PasswordConnector,
		},
	}
	seen := map[string]bool{server.LocalConnector: raw.EnablePasswordDB}
	for i, k := range raw.Connectors {
		at := fmt.Sprintf("connectors[%d]", i)
		switch {
		case k.Type == "":
			return nil, fmt.Errorf("%s.type: required", at)
		case k.ID == "":
			return nil, fmt.Errorf("%s.id: required", at)
		case k.Name == "":
			return nil, fmt.Errorf("%s.name: required", at)
		case seen[k.ID]:
			return nil, fmt.Errorf("%s.id: %q used twice", at, k.ID)
		}
		seen[k.ID] = true
		open, ok := server.ConnectorsConfig[k.Type]
		if !ok {
			return nil, fmt.Errorf("%s.type: unknown connector type %q", at, k.Type)
		}
		if len(k.Config) == 0 || string(k.Config) == "null" {
			return nil, fmt.Errorf("%s.config: required", at)
		}
		if err := decodeConnectorConfig(k.Config, open()); err != nil {
			return nil, fmt.Errorf("%s.config: %w", at, err)
		}
		c.Connectors = append(c.Connectors, Connector{Type: k.Type, ID: k.ID, Name: k.Name, Config: k.Config})
	}
	if len(raw.StaticPasswords) > 0 && !raw.EnablePasswordDB {
		return nil, errors.New("staticPasswords: needs enablePasswordDB: true")
	}
	emails := map[string]bool{}
	for i, p := range raw.StaticPasswords {
		at := fmt.Sprintf("staticPasswords[%d]", i)
		switch {
		case p.Email == "":
			return nil, fmt.Errorf("%s.email: required", at)
		case p.UserID == "":
			return nil, fmt.Errorf("%s.userID: required", at)
		case emails[strings.ToLower(p.Email)]:
			return nil, fmt.Errorf("%s.email: %q used twice", at, p.Email)
		}
		emails[strings.ToLower(p.Email)] = true
		if _, err := bcrypt.Cost([]byte(p.Hash)); err != nil {
			return nil, fmt.Errorf("%s.hash: not a bcrypt hash", at)
		}
		c.StaticPasswords = append(c.StaticPasswords, StaticPassword{
			Email: p.Email, Hash: []byte(p.Hash), Username: p.Username, UserID: p.UserID, Groups: p.Groups,
		})
	}
	clients := map[string]bool{}
	for i, k := range raw.StaticClients {
		at := fmt.Sprintf("staticClients[%d]", i)
		switch {
		case k.ID == "":
			return nil, fmt.Errorf("%s.id: required", at)
		case k.Name == "":
			return nil, fmt.Errorf("%s.name: required", at)
		case k.Secret == "" && !k.Public:
			return nil, fmt.Errorf("%s.secret: required unless public", at)
		case clients[k.ID]:
			return nil, fmt.Errorf("%s.id: %q used twice", at, k.ID)
		}
		clients[k.ID] = true
		c.StaticClients = append(c.StaticClients, Client{
			ID: k.ID, Secret: k.Secret, Name: k.Name, RedirectURIs: k.RedirectURIs,
			TrustedPeers: k.TrustedPeers, Public: k.Public,
		})
	}
	if pc := c.OAuth2.PasswordConnector; pc != "" && !seen[pc] {
		return nil, fmt.Errorf("oauth2.passwordConnector: no connector %q", pc)
	}
	return c, nil
}

// decodeConnectorConfig checks that data fits the connector's config type,
// the way Dex will decode it when the server opens the connector.
func decodeConnectorConfig(data []byte, into server.ConnectorConfig) (err error) {
	// Connector configs may have their own UnmarshalJSON; none of them may
	// take graphcd down.
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("cannot be decoded")
		}
	}()
	if err := json.Unmarshal(data, into); err != nil {
		return errors.New(describeJSONError(err))
	}
	return nil
}

// describeJSONError keeps the field and the types of a decoding error and
// drops anything else, which may quote a value.
func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s: want %s, got %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("want %s, got %s", te.Type, te.Value)
	}
	return "invalid value"
}

// resolver substitutes secret references and remembers what it put in, so
// that errors can be scrubbed of it.
type resolver struct {
	lookup func(secret, key string) (string, error)
	values []string
}

// walk returns v with secret references replaced, and turns YAML values
// JSON cannot carry into errors.
func (r *resolver) walk(at string, v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			e, err := r.walk(join(at, k), e)
			if err != nil {
				return nil, err
			}
			v[k] = e
		}
		return v, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%s: keys must be strings", orRoot(at))
			}
			e, err := r.walk(join(at, ks), e)
			if err != nil {
				return nil, err
			}
			out[ks] = e
		}
		return out, nil
	case []any:
		for i, e := range v {
			e, err := r.walk(at+"["+strconv.Itoa(i)+"]", e)
			if err != nil {
				return nil, err
			}
			v[i] = e
		}
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s: not a finite number", orRoot(at))
		}
		return v, nil
	case string:
		m := secretRef.FindStringSubmatch(v)
		if m == nil {
			return v, nil
		}
		secret, key := m[1], m[3]
		if secret == "" {
			secret = DefaultSecret
		}
		if r.lookup == nil {
			return nil, fmt.Errorf("%s: refers to secret %s key %s, but no secrets are available", orRoot(at), secret, key)
		}
		val, err := r.lookup(secret, key)
		if err != nil {
			return nil, fmt.Errorf("%s: read secret %s key %s: %w", orRoot(at), secret, key, err)
		}
		if val != "" {
			r.values = append(r.values, val)
		}
		return val, nil
	default:
		return v, nil
	}
}

// redact replaces every substituted value in err's text.
func (r *resolver) redact(err error) error {
	msg := err.Error()
	changed := false
	for _, v := range r.values {
		if strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, "[redacted]")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return errors.New(msg)
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

func orRoot(at string) string {
	if at == "" {
		return "(root)"
	}
	return at
}
