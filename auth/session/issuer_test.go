package session

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is an issuer on a fake clock with one static key and memory
// revocations on the same clock.
type fixture struct {
	clock  *clock
	keys   StaticKeys
	rev    *MemoryRevocations
	issuer *Issuer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: newClock(), keys: StaticKeys{Current: GenerateKey()}, rev: NewMemoryRevocations()}
	f.rev.now = f.clock.Now
	f.issuer = NewIssuer(f.keys, Options{Now: f.clock.Now, Revocations: f.rev})
	return f
}

func (f *fixture) issue(t *testing.T, tmpl Template) (string, *Claims) {
	t.Helper()
	tok, c, err := f.issuer.Issue(t.Context(), tmpl)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return tok, c
}

// sign signs claims with method and key, with the fixture's kid.
func (f *fixture) sign(t *testing.T, method jwt.SigningMethod, claims jwt.Claims, key any) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = f.keys.Current.ID
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", method.Alg(), err)
	}
	return s
}

// validClaims are claims Verify accepts, for tests to spoil one at a time.
func (f *fixture) validClaims() *Claims {
	now := f.clock.Now()
	return &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    DefaultIssuer,
			Subject:   "alice",
			Audience:  jwt.ClaimStrings{DefaultAudience},
			ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour)),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        "id-1",
		},
		Kind: KindSession,
	}
}

// wantReject checks that Verify rejects token with sentinel and a reason
// containing reason, and that the error does not repeat the token.
func wantReject(t *testing.T, i *Issuer, token string, sentinel error, reason string) {
	t.Helper()
	c, err := i.Verify(t.Context(), token)
	if err == nil {
		t.Fatalf("Verify accepted the token: %+v", c)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("Verify error %q does not wrap %q", err, sentinel)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("Verify error %q does not say %q", err, reason)
	}
	if len(token) > 8 && strings.Contains(err.Error(), token[len(token)/2:]) {
		t.Errorf("Verify error repeats the token: %q", err)
	}
	if c != nil {
		t.Errorf("Verify returned claims with an error: %+v", c)
	}
}

func TestIssueVerifyRoundTrip(t *testing.T) {
	f := newFixture(t)
	tok, issued := f.issue(t, Template{Subject: "alice", Groups: []string{"team-a", "team-b"}, Email: "alice@example.com", Kind: KindSSO})
	got, err := f.issuer.Verify(t.Context(), tok)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	now := f.clock.Now()
	want := &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    "graphcd",
			Subject:   "alice",
			Audience:  jwt.ClaimStrings{"graphcd"},
			ExpiresAt: jwt.NewNumericDate(now.Add(24 * time.Hour)),
			NotBefore: jwt.NewNumericDate(now),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        issued.ID,
		},
		Groups: []string{"team-a", "team-b"},
		Email:  "alice@example.com",
		Kind:   KindSSO,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("claims (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(issued, want); diff != "" {
		t.Errorf("issued claims (-got +want):\n%s", diff)
	}
	if len(issued.ID) != 32 {
		t.Errorf("random jti %q, want 32 hex digits", issued.ID)
	}
	_, again := f.issue(t, Template{Subject: "alice"})
	if again.ID == issued.ID {
		t.Errorf("two tokens share jti %q", again.ID)
	}
}

func TestIssueTemplate(t *testing.T) {
	f := newFixture(t)
	now := f.clock.Now()
	for _, tc := range []struct {
		name     string
		tmpl     Template
		wantExp  time.Time
		wantID   string
		wantKind Kind
	}{
		{"default kind and TTL", Template{Subject: "alice"}, now.Add(DefaultTTL), "", KindSession},
		{"own TTL", Template{Subject: "alice", TTL: time.Hour}, now.Add(time.Hour), "", KindSession},
		{"API token without expiry", Template{Subject: "ci", Kind: KindAPI, ID: "tok-1", TTL: NoExpiryTTL}, now.Add(NoExpiryTTL), "tok-1", KindAPI},
		{"project token", Template{Subject: "proj:shop:deployer", Kind: KindProject, ID: "p-1", TTL: 7 * 24 * time.Hour}, now.Add(7 * 24 * time.Hour), "p-1", KindProject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, _ := f.issue(t, tc.tmpl)
			c, err := f.issuer.Verify(t.Context(), tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !c.ExpiresAt.Equal(tc.wantExp) {
				t.Errorf("exp %s, want %s", c.ExpiresAt, tc.wantExp)
			}
			if tc.wantID != "" && c.ID != tc.wantID {
				t.Errorf("jti %q, want %q", c.ID, tc.wantID)
			}
			if c.Kind != tc.wantKind || c.Subject != tc.tmpl.Subject {
				t.Errorf("kind %q subject %q, want %q %q", c.Kind, c.Subject, tc.wantKind, tc.tmpl.Subject)
			}
		})
	}
}

func TestIssueRejectsBadTemplate(t *testing.T) {
	f := newFixture(t)
	for _, tmpl := range []Template{{}, {Subject: "alice", TTL: -time.Second}} {
		if tok, _, err := f.issuer.Issue(t.Context(), tmpl); err == nil {
			t.Errorf("Issue(%+v) = %q, want an error", tmpl, tok)
		}
	}
	empty := NewIssuer(StaticKeys{}, Options{})
	if _, _, err := empty.Issue(t.Context(), Template{Subject: "alice"}); err == nil {
		t.Error("Issue without a key succeeded")
	}
}

func TestVerifyUnsigned(t *testing.T) {
	f := newFixture(t)
	tok := f.sign(t, jwt.SigningMethodNone, f.validClaims(), jwt.UnsafeAllowNoneSignatureType)
	wantReject(t, f.issuer, tok, ErrInvalid, "algorithm not accepted")
	// The same with the signature part of a real token glued on.
	real, _ := f.issue(t, Template{Subject: "alice"})
	wantReject(t, f.issuer, tok+real[strings.LastIndex(real, ".")+1:], ErrInvalid, "algorithm not accepted")
}

func TestVerifyOtherKey(t *testing.T) {
	f := newFixture(t)
	other := NewIssuer(StaticKeys{Current: GenerateKey()}, Options{Now: f.clock.Now})
	tok, _, err := other.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, f.issuer, tok, ErrInvalid, "unknown key")

	// Another secret claiming our key's kid.
	t.Run("same kid", func(t *testing.T) {
		tok := f.sign(t, jwt.SigningMethodHS256, f.validClaims(), GenerateKey().Secret)
		wantReject(t, f.issuer, tok, ErrInvalid, "bad signature")
	})
	t.Run("no kid", func(t *testing.T) {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, f.validClaims()).SignedString(f.keys.Current.Secret)
		if err != nil {
			t.Fatal(err)
		}
		wantReject(t, f.issuer, tok, ErrInvalid, "unknown key")
	})
	t.Run("tampered claims", func(t *testing.T) {
		tok, _ := f.issue(t, Template{Subject: "alice"})
		parts := strings.Split(tok, ".")
		admin := f.sign(t, jwt.SigningMethodHS256, &Claims{RegisteredClaims: jwt.RegisteredClaims{Subject: "admin"}}, []byte("x"))
		parts[1] = strings.Split(admin, ".")[1]
		wantReject(t, f.issuer, strings.Join(parts, "."), ErrInvalid, "")
	})
}

func TestVerifyWithoutExp(t *testing.T) {
	f := newFixture(t)
	c := f.validClaims()
	c.ExpiresAt = nil
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "missing exp")
}

func TestVerifyExpired(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.issue(t, Template{Subject: "alice", TTL: time.Hour})
	f.clock.Advance(time.Hour + Leeway/2)
	if _, err := f.issuer.Verify(t.Context(), tok); err != nil {
		t.Fatalf("Verify within the leeway: %v", err)
	}
	f.clock.Advance(Leeway)
	wantReject(t, f.issuer, tok, ErrExpired, "expired")
}

func TestVerifyOtherAudience(t *testing.T) {
	f := newFixture(t)
	other := NewIssuer(f.keys, Options{Audience: "someone-else", Now: f.clock.Now})
	tok, _, err := other.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, f.issuer, tok, ErrInvalid, "another audience")
	c := f.validClaims()
	c.Audience = nil
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "")
}

func TestVerifyOtherIssuer(t *testing.T) {
	f := newFixture(t)
	other := NewIssuer(f.keys, Options{Issuer: "https://dex.example.com", Now: f.clock.Now})
	tok, _, err := other.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	wantReject(t, f.issuer, tok, ErrInvalid, "another issuer")
	c := f.validClaims()
	c.Issuer = ""
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "")
}

func TestVerifyNotYetValid(t *testing.T) {
	f := newFixture(t)
	c := f.validClaims()
	c.NotBefore = jwt.NewNumericDate(f.clock.Now().Add(time.Hour))
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "not valid yet")

	c = f.validClaims()
	c.IssuedAt = jwt.NewNumericDate(f.clock.Now().Add(time.Hour))
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "issued in the future")

	// A replica whose clock is a little ahead issued it: accepted.
	c = f.validClaims()
	c.NotBefore = jwt.NewNumericDate(f.clock.Now().Add(Leeway / 2))
	c.IssuedAt = c.NotBefore
	if _, err := f.issuer.Verify(t.Context(), f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret)); err != nil {
		t.Errorf("Verify of a token from a clock %s ahead: %v", Leeway/2, err)
	}
}

func TestVerifyMissingSubjectOrID(t *testing.T) {
	f := newFixture(t)
	c := f.validClaims()
	c.Subject = ""
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "missing sub")
	c = f.validClaims()
	c.ID = ""
	wantReject(t, f.issuer, f.sign(t, jwt.SigningMethodHS256, c, f.keys.Current.Secret), ErrInvalid, "missing jti")
}

func TestVerifyGarbage(t *testing.T) {
	f := newFixture(t)
	real, _ := f.issue(t, Template{Subject: "alice"})
	parts := strings.Split(real, ".")
	for name, tok := range map[string]string{
		"empty":             "",
		"word":              "hello",
		"dots":              "..",
		"four parts":        real + ".x",
		"two parts":         parts[0] + "." + parts[1],
		"bad base64":        parts[0] + ".!!!." + parts[2],
		"header not JSON":   "bm90IGpzb24." + parts[1] + "." + parts[2],
		"claims not JSON":   parts[0] + ".bm90IGpzb24." + parts[2],
		"claims wrong type": parts[0] + "." + b64(`{"exp":"tomorrow","sub":"alice"}`) + "." + parts[2],
		"binary":            "\x00\xff\xfe.\x01.\x02",
		"bearer prefix":     "Bearer " + real,
		"padding":           parts[0] + "=." + parts[1] + "." + parts[2],
	} {
		t.Run(name, func(t *testing.T) {
			wantReject(t, f.issuer, tok, ErrInvalid, "")
		})
	}
	t.Run("oversized", func(t *testing.T) {
		huge := parts[0] + "." + strings.Repeat("A", 1<<20) + "." + parts[2]
		wantReject(t, f.issuer, huge, ErrInvalid, "longer than")
	})
	t.Run("large groups within the limit", func(t *testing.T) {
		groups := make([]string, 100)
		for i := range groups {
			groups[i] = strings.Repeat("g", 50)
		}
		tok, _ := f.issue(t, Template{Subject: "alice", Groups: groups})
		if len(tok) > MaxTokenSize {
			t.Fatalf("token of %d bytes", len(tok))
		}
		if _, err := f.issuer.Verify(t.Context(), tok); err != nil {
			t.Errorf("Verify: %v", err)
		}
	})
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestVerifyOnlyHS256(t *testing.T) {
	f := newFixture(t)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := f.keys.Current.Secret
	for _, tc := range []struct {
		method jwt.SigningMethod
		key    any
	}{
		{jwt.SigningMethodHS384, secret},
		{jwt.SigningMethodHS512, secret},
		{jwt.SigningMethodRS256, rsaKey},
		{jwt.SigningMethodPS256, rsaKey},
		{jwt.SigningMethodES256, ecKey},
	} {
		t.Run(tc.method.Alg(), func(t *testing.T) {
			wantReject(t, f.issuer, f.sign(t, tc.method, f.validClaims(), tc.key), ErrInvalid, "algorithm not accepted")
		})
	}
	// The classic confusion: an RS256 header over an HMAC made with our
	// secret must not verify either.
	t.Run("RS256 header over HMAC", func(t *testing.T) {
		hs := strings.Split(f.sign(t, jwt.SigningMethodHS256, f.validClaims(), secret), ".")
		hs[0] = b64(`{"alg":"RS256","kid":"` + f.keys.Current.ID + `","typ":"JWT"}`)
		wantReject(t, f.issuer, strings.Join(hs, "."), ErrInvalid, "algorithm not accepted")
	})
}

func TestVerifyRevoked(t *testing.T) {
	f := newFixture(t)
	tok, c := f.issue(t, Template{Subject: "alice", TTL: time.Hour})
	other, _ := f.issue(t, Template{Subject: "alice", TTL: time.Hour})
	if err := f.issuer.Revoke(t.Context(), c); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	wantReject(t, f.issuer, tok, ErrRevoked, "revoked")
	if _, err := f.issuer.Verify(t.Context(), other); err != nil {
		t.Errorf("another token of the same subject: %v", err)
	}
	if err := f.issuer.Revoke(t.Context(), c); err != nil {
		t.Errorf("second Revoke: %v", err)
	}
	// Once the token would have expired it is expired, not revoked, and
	// the list forgets it.
	f.clock.Advance(time.Hour + Leeway + time.Second)
	wantReject(t, f.issuer, tok, ErrExpired, "expired")
	if err := f.rev.Revoke(t.Context(), "another", f.clock.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if n := f.rev.Len(); n != 1 {
		t.Errorf("%d entries after expiry, want 1", n)
	}
	if err := f.issuer.Revoke(t.Context(), &Claims{}); err == nil {
		t.Error("Revoke without an ID succeeded")
	}
}

func TestRotation(t *testing.T) {
	f := newFixture(t)
	k1, k2, k3 := f.keys.Current, GenerateKey(), GenerateKey()
	keys := &StaticKeys{Current: k1}
	i := NewIssuer(keysFunc(func() StaticKeys { return *keys }), Options{Now: f.clock.Now})
	old, _, err := i.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	*keys = StaticKeys{Current: k2, VerifyOnly: []Key{k1}}
	if _, err := i.Verify(t.Context(), old); err != nil {
		t.Errorf("token of the previous key after one rotation: %v", err)
	}
	newer, _, err := i.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if kid := header(t, newer)["kid"]; kid != k2.ID {
		t.Errorf("new token's kid %v, want the new key's %s", kid, k2.ID)
	}
	*keys = StaticKeys{Current: k3, VerifyOnly: []Key{k2}}
	wantReject(t, i, old, ErrInvalid, "unknown key")
	if _, err := i.Verify(t.Context(), newer); err != nil {
		t.Errorf("token of the previous key after two rotations: %v", err)
	}
}

// keysFunc is a KeySource that can change between calls.
type keysFunc func() StaticKeys

func (f keysFunc) Keys(ctx context.Context) (Key, []Key, error) { return f().Keys(ctx) }

func header(t *testing.T, tok string) map[string]any {
	t.Helper()
	parsed, _, err := jwt.NewParser().ParseUnverified(tok, &Claims{})
	if err != nil {
		t.Fatal(err)
	}
	return parsed.Header
}

func TestKeyID(t *testing.T) {
	k := GenerateKey()
	if len(k.ID) != 16 || strings.Contains(k.ID, string(k.Secret)) {
		t.Errorf("kid %q", k.ID)
	}
	same, err := NewKey(k.Secret)
	if err != nil || same.ID != k.ID {
		t.Errorf("NewKey of the same secret: %v, %q != %q", err, same.ID, k.ID)
	}
	if GenerateKey().ID == k.ID {
		t.Error("two keys share a kid")
	}
	if _, err := NewKey(make([]byte, MinKeySize-1)); err == nil {
		t.Error("NewKey accepted a short key")
	}
}

// FuzzVerify checks that no input makes Verify panic or accept a token
// it did not issue.
func FuzzVerify(f *testing.F) {
	keys := StaticKeys{Current: GenerateKey()}
	i := NewIssuer(keys, Options{})
	tok, _, err := i.Issue(context.Background(), Template{Subject: "alice"})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", ".", "..", "a.b.c", tok, tok + "x", "x" + tok} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := i.Verify(context.Background(), s)
		if err == nil && s != tok {
			t.Errorf("Verify accepted %q: %+v", s, c)
		}
		if err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrExpired) {
			t.Errorf("Verify(%q) = %v, want ErrInvalid", s, err)
		}
	})
}

// Verify hands out copies: a caller changing its claims changes nothing
// for the next request with the same token.
func TestVerifyReturnsCopies(t *testing.T) {
	f := newFixture(t)
	tok, _ := f.issue(t, Template{Subject: "alice", Groups: []string{"team-a"}})
	for range 2 {
		c, err := f.issuer.Verify(t.Context(), tok)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subject != "alice" || len(c.Groups) != 1 || c.Groups[0] != "team-a" {
			t.Fatalf("claims %+v", c)
		}
		c.Subject, c.Groups[0] = "admin", "role:admin"
	}
}

func TestVerifiedCacheBounded(t *testing.T) {
	v := newVerified()
	now := time.Now()
	entry := func(exp time.Time) verifiedEntry {
		return verifiedEntry{claims: &Claims{RegisteredClaims: jwt.RegisteredClaims{ExpiresAt: jwt.NewNumericDate(exp)}}}
	}
	var expired [sha256.Size]byte
	expired[0] = 0xff
	v.put(expired, entry(now.Add(-time.Hour)), now)
	for n := range verifiedSize + 100 {
		var sum [sha256.Size]byte
		sum[1], sum[2] = byte(n), byte(n>>8)
		v.put(sum, entry(now.Add(time.Hour)), now)
		if len(v.entries) > verifiedSize {
			t.Fatalf("%d entries after %d puts, bound %d", len(v.entries), n+2, verifiedSize)
		}
	}
	if _, ok := v.get(expired); ok {
		t.Error("an expired entry survived eviction")
	}
}
