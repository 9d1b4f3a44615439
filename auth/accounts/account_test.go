package accounts

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/crypto/bcrypt"
)

func TestParse(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("password1"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2026, 11, 30, 4, 40, 21, 0, time.UTC)
	tests := []struct {
		name   string
		cm     map[string]string
		secret map[string][]byte
		want   []Account
	}{{
		name: "nothing stored: admin only",
		want: []Account{{Name: Admin, Enabled: true, Capabilities: []Capability{CapabilityLogin}}},
	}, {
		name: "declared accounts",
		cm: map[string]string{
			"accounts.alice":         "apiKey, login",
			"accounts.ci":            "apiKey",
			"accounts.bob":           "",
			"accounts.bob.enabled":   "false",
			"accounts.carol.enabled": "true",
			"admin.enabled":          "false",
			"url":                    "https://cd.example.com",
			"accounts.x.unknown":     "ignored",
		},
		secret: map[string][]byte{
			"admin.password":               hash,
			"admin.passwordMtime":          []byte(mtime.Format(time.RFC3339)),
			"accounts.alice.passwordMtime": []byte(mtime.Format(time.RFC3339)),
			"accounts.alice.tokens":        []byte(`[{"id":"t1","iat":10},{"id":"t2","iat":11,"exp":20}]`),
			"accounts.nobody.password":     hash, // not declared: not an account
			"server.secretkey":             []byte("other package"),
		},
		want: []Account{
			{Name: Admin, Capabilities: []Capability{CapabilityLogin}, HasPassword: true, PasswordMtime: mtime},
			{Name: "alice", Enabled: true, Capabilities: []Capability{CapabilityAPIKey, CapabilityLogin}, PasswordMtime: mtime,
				Tokens: []Token{{ID: "t1", IssuedAt: 10}, {ID: "t2", IssuedAt: 11, ExpiresAt: 20}}},
			{Name: "bob", Capabilities: []Capability{CapabilityLogin}},
			{Name: "carol", Enabled: true, Capabilities: []Capability{CapabilityLogin}},
			{Name: "ci", Enabled: true, Capabilities: []Capability{CapabilityAPIKey}},
		},
	}, {
		name: "admin gains apiKey and can be disabled through accounts.admin",
		cm:   map[string]string{"accounts.admin": "apiKey", "accounts.admin.enabled": "false"},
		want: []Account{{Name: Admin, Capabilities: []Capability{CapabilityAPIKey, CapabilityLogin}}},
	}, {
		name: "malformed data stays with its account",
		cm: map[string]string{
			"accounts.alice":        "login",
			"accounts.bob":          "login",
			"accounts.carol":        "sudo",
			"accounts.dave.enabled": "nope",
		},
		secret: map[string][]byte{
			"accounts.alice.tokens":        []byte(`{"id":`),
			"accounts.alice.passwordMtime": []byte("yesterday"),
			"accounts.alice.password":      []byte("plain-text-secret"),
			"accounts.bob.tokens":          []byte(`[{"id":"a"},{"id":"a"}]`),
			"accounts.bob.password":        hash,
		},
		want: []Account{
			{Name: Admin, Enabled: true, Capabilities: []Capability{CapabilityLogin}},
			{Name: "alice", Enabled: true, Capabilities: []Capability{CapabilityLogin}, Problems: []string{
				"accounts.alice.password in graphcd-secret is not a bcrypt hash",
				"accounts.alice.passwordMtime in graphcd-secret is not an RFC 3339 time",
				"accounts.alice.tokens in graphcd-secret: not a JSON list of tokens; the account has no tokens until it is fixed",
			}},
			{Name: "bob", Enabled: true, Capabilities: []Capability{CapabilityLogin}, HasPassword: true, Problems: []string{
				"accounts.bob.tokens in graphcd-secret: a token has an empty or repeated id; the account has no tokens until it is fixed",
			}},
			{Name: "carol", Enabled: true, Problems: []string{`accounts.carol in graphcd-cm: unknown capability "sudo" ignored`}},
			{Name: "dave", Capabilities: []Capability{CapabilityLogin}, Problems: []string{
				"accounts.dave.enabled in graphcd-cm is not a boolean; the account is disabled",
			}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := parse(tt.cm, tt.secret)
			var got []Account
			for _, a := range snap.accounts {
				got = append(got, a)
			}
			sortAccounts(got)
			if diff := cmp.Diff(got, tt.want, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("accounts (-got +want):\n%s", diff)
			}
			for _, a := range got {
				if _, ok := snap.hashes[a.Name]; ok != a.HasPassword {
					t.Errorf("%s: hash stored %v, HasPassword %v", a.Name, ok, a.HasPassword)
				}
			}
		})
	}
}

func TestTokenValid(t *testing.T) {
	mtime := time.Date(2026, 11, 30, 4, 40, 21, 0, time.UTC)
	tests := []struct {
		name  string
		mtime time.Time
		iat   time.Time
		want  bool
	}{
		{"never changed", time.Time{}, mtime, true},
		{"issued a second before", mtime, mtime.Add(-time.Second), false},
		{"issued in the same second", mtime, mtime, false},
		{"issued in the same second, later", mtime, mtime.Add(900 * time.Millisecond), false},
		{"issued the next second", mtime, mtime.Add(time.Second), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Account{PasswordMtime: tt.mtime}
			if got := a.TokenValid(tt.iat); got != tt.want {
				t.Errorf("TokenValid(%v) with mtime %v = %v, want %v", tt.iat, tt.mtime, got, tt.want)
			}
		})
	}
}

func TestTokenExpired(t *testing.T) {
	now := time.Unix(100, 0)
	for _, tt := range []struct {
		tok  Token
		want bool
	}{
		{Token{ID: "a"}, false},
		{Token{ID: "a", ExpiresAt: 101}, false},
		{Token{ID: "a", ExpiresAt: 100}, true},
		{Token{ID: "a", ExpiresAt: 99}, true},
	} {
		if got := tt.tok.Expired(now); got != tt.want {
			t.Errorf("%+v.Expired(%v) = %v, want %v", tt.tok, now.Unix(), got, tt.want)
		}
	}
}

func TestReached(t *testing.T) {
	for _, tt := range []struct {
		have, want string
		ok         bool
	}{
		{"5", "5", true}, {"6", "5", true}, {"4", "5", false}, {"", "5", false}, {"abc", "abd", false}, {"abc", "abc", true},
	} {
		if got := reached(tt.have, tt.want); got != tt.ok {
			t.Errorf("reached(%q, %q) = %v, want %v", tt.have, tt.want, got, tt.ok)
		}
	}
}
