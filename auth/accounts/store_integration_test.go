//go:build integration

package accounts

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/crypto/bcrypt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The store reads accounts from graphcd-cm and graphcd-secret and follows
// their changes.
func TestStoreFollowsConfigMap(t *testing.T) {
	s, ns := startStore(t, map[string]string{
		"accounts.alice":       "apiKey, login",
		"accounts.bob":         "login",
		"accounts.bob.enabled": "false",
	}, map[string][]byte{"accounts.alice.password": hash(t, "alice-pass")})

	got := s.List()
	want := []Account{
		{Name: Admin, Enabled: true, Capabilities: []Capability{CapabilityLogin}},
		{Name: "alice", Enabled: true, Capabilities: []Capability{CapabilityAPIKey, CapabilityLogin}, HasPassword: true},
		{Name: "bob", Capabilities: []Capability{CapabilityLogin}},
	}
	if diff := cmp.Diff(got, want, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("List (-got +want):\n%s", diff)
	}

	cms := cluster.Client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(t.Context(), ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["accounts.alice.enabled"] = "false"
	cm.Data["admin.enabled"] = "false"
	delete(cm.Data, "accounts.bob.enabled")
	if _, err := cms.Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, s, "alice is disabled", func() bool { a, _ := s.Get("alice"); return !a.Enabled })
	if a, ok := s.Get(Admin); !ok || a.Enabled {
		t.Errorf("admin after admin.enabled=false: %+v, %v; want disabled", a, ok)
	}
	if b, _ := s.Get("bob"); !b.Enabled {
		t.Errorf("bob is still disabled after its enabled key was removed")
	}
	if err := s.CheckPassword(t.Context(), "alice", "alice-pass"); !errors.Is(err, ErrInvalidCredentials) {
		t.Errorf("CheckPassword of disabled alice = %v, want ErrInvalidCredentials", err)
	}

	if err := cms.Delete(t.Context(), ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, s, "alice is gone", func() bool { _, ok := s.Get("alice"); return !ok })
	if a, ok := s.Get(Admin); !ok || !a.Enabled {
		t.Errorf("admin without graphcd-cm: %+v, %v; want enabled", a, ok)
	}
}

func TestCheckPassword(t *testing.T) {
	s, _ := startStore(t, map[string]string{
		"accounts.alice":       "login",
		"accounts.ci":          "apiKey",
		"accounts.nopass":      "login",
		"accounts.off":         "login",
		"accounts.off.enabled": "false",
		"accounts.badhash":     "login",
	}, map[string][]byte{
		"admin.password":            hash(t, "admin-pass"),
		"accounts.alice.password":   hash(t, "alice-pass"),
		"accounts.ci.password":      hash(t, "ci-pass"),
		"accounts.off.password":     hash(t, "off-pass"),
		"accounts.badhash.password": []byte("badhash-pass"),
	})
	tests := []struct {
		user, password string
		ok             bool
	}{
		{Admin, "admin-pass", true},
		{Admin, "admin-pass ", false},
		{"alice", "alice-pass", true},
		{"alice", "admin-pass", false},
		{"alice", "", false},
		{"unknown", "alice-pass", false},
		{"", "", false},
		{"ci", "ci-pass", false},           // no login capability
		{"nopass", "", false},              // no password
		{"off", "off-pass", false},         // disabled
		{"badhash", "badhash-pass", false}, // a plain-text "hash" never matches
		{"alice", strings.Repeat("x", 200), false},
	}
	for _, tt := range tests {
		err := s.CheckPassword(t.Context(), tt.user, tt.password)
		if tt.ok && err != nil {
			t.Errorf("CheckPassword(%q) = %v, want nil", tt.user, err)
		}
		if !tt.ok && !sameError(err, ErrInvalidCredentials) {
			t.Errorf("CheckPassword(%q) = %v, want exactly ErrInvalidCredentials", tt.user, err)
		}
	}
}

func TestUpdatePassword(t *testing.T) {
	s, ns := startStore(t, map[string]string{"accounts.alice": "login"}, map[string][]byte{
		"accounts.alice.password": hash(t, "alice-pass"),
		"server.secretkey":        []byte("kept"),
	})
	ctx := t.Context()
	for _, next := range []string{"short", strings.Repeat("x", 73)} {
		if err := s.UpdatePassword(ctx, "alice", "alice-pass", next); !errors.Is(err, ErrPasswordPolicy) {
			t.Errorf("UpdatePassword to %d bytes = %v, want ErrPasswordPolicy", len(next), err)
		}
	}
	if err := s.UpdatePassword(ctx, "alice", "wrong-pass", "new-alice-pass"); !sameError(err, ErrInvalidCredentials) {
		t.Errorf("UpdatePassword with a wrong current password = %v, want ErrInvalidCredentials", err)
	}
	if err := s.UpdatePassword(ctx, "nobody", "alice-pass", "new-alice-pass"); !sameError(err, ErrInvalidCredentials) {
		t.Errorf("UpdatePassword of an unknown account = %v, want ErrInvalidCredentials", err)
	}
	if a, _ := s.Get("alice"); !a.PasswordMtime.IsZero() {
		t.Fatalf("a refused change set passwordMtime to %v", a.PasswordMtime)
	}

	before := time.Now()
	if err := s.UpdatePassword(ctx, "alice", "alice-pass", "new-alice-pass"); err != nil {
		t.Fatalf("UpdatePassword: %v", err)
	}
	a, _ := s.Get("alice")
	if a.PasswordMtime.Unix() < before.Unix() {
		t.Errorf("passwordMtime %v is before the change at %v", a.PasswordMtime, before)
	}
	if a.TokenValid(before.Truncate(time.Second)) {
		t.Errorf("a session issued before the change is still valid")
	}
	if !a.TokenValid(time.Now()) {
		t.Errorf("a session issued after UpdatePassword returned is refused (mtime %v)", a.PasswordMtime)
	}
	if err := s.CheckPassword(ctx, "alice", "alice-pass"); !sameError(err, ErrInvalidCredentials) {
		t.Errorf("old password: %v, want ErrInvalidCredentials", err)
	}
	if err := s.CheckPassword(ctx, "alice", "new-alice-pass"); err != nil {
		t.Errorf("new password: %v", err)
	}

	// An administrator resets the admin's password, which had none.
	if err := s.SetPassword(ctx, Admin, "admin-pass-2"); err != nil {
		t.Fatalf("SetPassword: %v", err)
	}
	if err := s.CheckPassword(ctx, Admin, "admin-pass-2"); err != nil {
		t.Errorf("admin's new password: %v", err)
	}
	if err := s.SetPassword(ctx, "nobody", "admin-pass-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetPassword of an unknown account = %v, want ErrNotFound", err)
	}
	data := readSecret(t, ctx, ns, SecretName)
	if string(data["server.secretkey"]) != "kept" {
		t.Errorf("server.secretkey = %q after password changes, want kept", data["server.secretkey"])
	}
	if _, err := time.Parse(time.RFC3339, string(data["admin.passwordMtime"])); err != nil {
		t.Errorf("admin.passwordMtime: %v", err)
	}
	if bcrypt.CompareHashAndPassword(data["admin.password"], []byte("admin-pass-2")) != nil {
		t.Errorf("admin.password does not hold the new password's hash")
	}
}

// A password set on a namespace without graphcd-secret creates it.
func TestSetPasswordCreatesSecret(t *testing.T) {
	s, ns := startStore(t, nil, nil)
	if err := s.SetPassword(t.Context(), Admin, "admin-pass"); err != nil {
		t.Fatalf("SetPassword: %v", err)
	}
	if err := s.CheckPassword(t.Context(), Admin, "admin-pass"); err != nil {
		t.Errorf("CheckPassword: %v", err)
	}
	if len(readSecret(t, t.Context(), ns, SecretName)["admin.password"]) == 0 {
		t.Errorf("graphcd-secret has no admin.password")
	}
}

func TestTokens(t *testing.T) {
	s, ns := startStore(t, map[string]string{
		"accounts.ci":    "apiKey",
		"accounts.alice": "login",
		"accounts.admin": "apiKey",
	}, map[string][]byte{"server.secretkey": []byte("kept")})
	ctx := t.Context()
	now := time.Now().Unix()
	if err := s.AddToken(ctx, "ci", Token{ID: "t1", IssuedAt: now}); err != nil {
		t.Fatalf("AddToken: %v", err)
	}
	if !s.HasToken("ci", "t1") {
		t.Errorf("HasToken(ci, t1) = false after AddToken")
	}
	if err := s.AddToken(ctx, "ci", Token{ID: "t1", IssuedAt: now}); !errors.Is(err, ErrTokenExists) {
		t.Errorf("second AddToken(t1) = %v, want ErrTokenExists", err)
	}
	if err := s.AddToken(ctx, "alice", Token{ID: "t1", IssuedAt: now}); !errors.Is(err, ErrNoCapability) {
		t.Errorf("AddToken to a login-only account = %v, want ErrNoCapability", err)
	}
	if err := s.AddToken(ctx, "nobody", Token{ID: "t1", IssuedAt: now}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddToken to an unknown account = %v, want ErrNotFound", err)
	}
	if err := s.AddToken(ctx, Admin, Token{ID: "a1", IssuedAt: now}); err != nil {
		t.Errorf("AddToken to admin with accounts.admin: apiKey: %v", err)
	}
	if err := s.AddToken(ctx, "ci", Token{ID: "old", IssuedAt: now - 100, ExpiresAt: now - 1}); err != nil {
		t.Fatal(err)
	}
	if s.HasToken("ci", "old") {
		t.Errorf("HasToken is true for an expired token")
	}
	if s.HasToken("alice", "t1") || s.HasToken("ci", "a1") {
		t.Errorf("HasToken is true for another account's token")
	}

	// Concurrent additions all land.
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Go(func() { errs <- s.AddToken(ctx, "ci", Token{ID: fmt.Sprintf("p%d", i), IssuedAt: now}) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent AddToken: %v", err)
		}
	}
	a, _ := s.Get("ci")
	if len(a.Tokens) != 12 {
		t.Errorf("ci has %d tokens after 12 additions: %+v", len(a.Tokens), a.Tokens)
	}

	if err := s.RemoveToken(ctx, "ci", "t1"); err != nil {
		t.Fatalf("RemoveToken: %v", err)
	}
	if s.HasToken("ci", "t1") {
		t.Errorf("HasToken(ci, t1) after RemoveToken")
	}
	if err := s.RemoveToken(ctx, "ci", "t1"); !errors.Is(err, ErrTokenNotFound) {
		t.Errorf("second RemoveToken = %v, want ErrTokenNotFound", err)
	}
	data := readSecret(t, ctx, ns, SecretName)
	if string(data["server.secretkey"]) != "kept" {
		t.Errorf("server.secretkey = %q, want kept", data["server.secretkey"])
	}
	if !strings.Contains(string(data["admin.tokens"]), `"a1"`) {
		t.Errorf("admin.tokens = %s, want the a1 token", data["admin.tokens"])
	}

	// Disabling the account hides its tokens.
	cms := cluster.Client.CoreV1().ConfigMaps(ns)
	cm, err := cms.Get(ctx, ConfigMapName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["accounts.ci.enabled"] = "false"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, s, "ci is disabled", func() bool { a, _ := s.Get("ci"); return !a.Enabled })
	if s.HasToken("ci", "p1") {
		t.Errorf("HasToken is true for a disabled account")
	}
}

// Malformed data of one account leaves the others working, and no
// problem report carries a stored value.
func TestMalformedData(t *testing.T) {
	const secretish = "plain-text-password"
	s, _ := startStore(t, map[string]string{
		"accounts.alice": "apiKey, login",
		"accounts.bob":   "apiKey, login",
	}, map[string][]byte{
		"accounts.alice.tokens":        []byte(`[{"id":"` + secretish),
		"accounts.alice.passwordMtime": []byte(secretish),
		"accounts.alice.password":      []byte(secretish),
		"accounts.bob.tokens":          []byte(`[{"id":"b1","iat":1}]`),
		"accounts.bob.password":        hash(t, "bob-pass"),
	})
	ctx := t.Context()
	alice, _ := s.Get("alice")
	if len(alice.Problems) != 3 {
		t.Errorf("alice's problems = %q, want 3", alice.Problems)
	}
	for _, p := range alice.Problems {
		if strings.Contains(p, secretish) {
			t.Errorf("problem %q shows the stored value", p)
		}
	}
	if len(alice.Tokens) != 0 || !alice.PasswordMtime.IsZero() || alice.HasPassword {
		t.Errorf("alice = %+v, want no tokens, zero mtime, no password", alice)
	}
	if err := s.AddToken(ctx, "alice", Token{ID: "a1"}); err == nil || strings.Contains(err.Error(), secretish) {
		t.Errorf("AddToken over malformed tokens = %v, want an error without the stored value", err)
	}
	if !s.HasToken("bob", "b1") {
		t.Errorf("bob's token is lost")
	}
	if err := s.CheckPassword(ctx, "bob", "bob-pass"); err != nil {
		t.Errorf("bob cannot sign in: %v", err)
	}
	if err := s.AddToken(ctx, "bob", Token{ID: "b2"}); err != nil {
		t.Errorf("AddToken(bob): %v", err)
	}
}

// sameError reports whether err is target with nothing added: failed
// sign-ins must all read the same.
func sameError(err, target error) bool {
	return errors.Is(err, target) && err.Error() == target.Error()
}
