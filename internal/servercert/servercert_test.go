package servercert

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/selfsigned"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func generate(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	c, k, err := selfsigned.Certificate(cn, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, k
}

func served(t *testing.T, s *Source) string {
	t.Helper()
	c, err := s.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf.Subject.CommonName
}

// Files serves the files' certificate, a changed pair from the next
// handshake after the check interval, and keeps the previous one while
// the files do not parse (a writer between the two files).
func TestFilesReload(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	write := func(c, k []byte) {
		t.Helper()
		if err := os.WriteFile(certFile, c, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keyFile, k, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(generate(t, "first"))
	s, err := Files(certFile, keyFile, discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := served(t, s); got != "first" {
		t.Fatalf("served %q, want first", got)
	}

	secondCert, secondKey := generate(t, "second")
	_, otherKey := generate(t, "other")
	write(secondCert, otherKey) // the key of another certificate
	time.Sleep(fileCheckInterval + 100*time.Millisecond)
	if got := served(t, s); got != "first" {
		t.Errorf("with a mismatched pair served %q, want first kept", got)
	}
	write(secondCert, secondKey)
	time.Sleep(fileCheckInterval + 100*time.Millisecond)
	if got := served(t, s); got != "second" {
		t.Errorf("after the rewrite served %q, want second", got)
	}
}

func TestFilesRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	certPEM, _ := generate(t, "x")
	_, otherKey := generate(t, "y")
	certFile, keyFile := filepath.Join(dir, "c"), filepath.Join(dir, "k")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, otherKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Files(certFile, keyFile, discard); err == nil {
		t.Error("a key of another certificate was accepted")
	} else if bytes.Contains([]byte(err.Error()), otherKey[30:60]) {
		t.Error("the error shows key material")
	}
	if _, err := Files(filepath.Join(dir, "missing"), keyFile, discard); err == nil {
		t.Error("a missing file was accepted")
	}
}

// Only an empty slot, or a certificate graphcd generated that is about to
// expire, is replaced; an operator's certificate never is.
func TestReplaceable(t *testing.T) {
	ours, ourKey := generate(t, CommonName)
	theirs, theirKey := generate(t, "graphcd.example.com")
	for _, tc := range []struct {
		name string
		data map[string][]byte
		want bool
	}{
		{"empty", map[string][]byte{}, true},
		{"generated and fresh", map[string][]byte{KeyCert: ours, KeyKey: ourKey}, false},
		{"an operator's", map[string][]byte{KeyCert: theirs, KeyKey: theirKey}, false},
		{"invalid", map[string][]byte{KeyCert: []byte("junk"), KeyKey: ourKey}, false},
	} {
		if got := replaceable(tc.data); got != tc.want {
			t.Errorf("%s: replaceable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
