package git

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestCredentialsNeverPrinted(t *testing.T) {
	creds := Credentials{
		Username:      "alice",
		Password:      "hunter2-password",
		BearerToken:   "bearer-token-value",
		SSHPrivateKey: []byte("-----BEGIN OPENSSH PRIVATE KEY-----secretkey"),
		TLSClientKey:  []byte("tls-key-material"),
		Insecure:      true,
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "creds", creds, "ptr", &creds)
	outputs := map[string]string{
		"%v":     fmt.Sprintf("%v", creds),
		"%+v":    fmt.Sprintf("%+v", creds),
		"%#v":    fmt.Sprintf("%#v", creds),
		"Sprint": fmt.Sprint(creds),
		"ptr":    fmt.Sprintf("%v", &creds),
		"slog":   logged.String(),
	}
	for name, out := range outputs {
		for _, secret := range []string{"alice", "hunter2", "bearer-token", "secretkey", "tls-key"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s output %q contains %q", name, out, secret)
			}
		}
		if !strings.Contains(out, "password=***") {
			t.Errorf("%s output %q does not say a password is set", name, out)
		}
	}
}

func TestScrubKeepsChain(t *testing.T) {
	creds := &Credentials{Password: "pa55word", BearerToken: "tok-abc"}
	base := errors.New("server said pa55word and tok-abc at https://u:pa55word@h/r")
	err := scrub(fmt.Errorf("fetch: %w", base), creds)
	if strings.Contains(err.Error(), "pa55word") || strings.Contains(err.Error(), "tok-abc") {
		t.Errorf("scrubbed error still has a secret: %q", err)
	}
	if !errors.Is(err, base) {
		t.Error("scrub broke errors.Is")
	}
}

func TestFingerprintDistinguishesCredentials(t *testing.T) {
	a := &Credentials{Username: "a", Password: "bc"}
	b := &Credentials{Username: "ab", Password: "c"}
	if a.fingerprint() == b.fingerprint() {
		t.Error("different credentials share a fingerprint")
	}
	var none *Credentials
	if none.fingerprint() == (&Credentials{}).fingerprint() {
		t.Error("nil and empty credentials should differ")
	}
}
