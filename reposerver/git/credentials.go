package git

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/graphcd/graphcd/internal/repourl"
)

// Credentials authenticate against a Git server. They are never printed:
// String, GoString and LogValue redact every field.
type Credentials struct {
	// Username and Password are used for HTTPS basic authentication (a token
	// as password works too) and, without a key, for SSH password auth.
	Username, Password string
	// BearerToken is sent as "Authorization: Bearer" over HTTPS; it wins
	// over Username/Password.
	BearerToken string
	// SSHPrivateKey is a PEM-encoded private key for ssh:// and scp-style URLs.
	SSHPrivateKey []byte
	// SSHKnownHosts holds known_hosts lines; without them SSH is refused
	// unless Insecure is set.
	SSHKnownHosts []byte
	// TLSClientCert and TLSClientKey (PEM) enable mutual TLS over HTTPS.
	TLSClientCert, TLSClientKey []byte
	// CACert (PEM) is trusted in addition to the system roots.
	CACert []byte
	// Insecure skips TLS verification for HTTPS and host key checking for SSH.
	Insecure bool
}

const redacted = repourl.Mask

// String redacts the secrets.
func (c Credentials) String() string {
	var parts []string
	add := func(name string, set bool) {
		if set {
			parts = append(parts, name+"="+redacted)
		}
	}
	add("username", c.Username != "")
	add("password", c.Password != "")
	add("bearerToken", c.BearerToken != "")
	add("sshPrivateKey", len(c.SSHPrivateKey) > 0)
	add("sshKnownHosts", len(c.SSHKnownHosts) > 0)
	add("tlsClientCert", len(c.TLSClientCert) > 0)
	add("tlsClientKey", len(c.TLSClientKey) > 0)
	add("caCert", len(c.CACert) > 0)
	if c.Insecure {
		parts = append(parts, "insecure=true")
	}
	return "Credentials{" + strings.Join(parts, ", ") + "}"
}

// GoString redacts the secrets, also for %#v.
func (c Credentials) GoString() string { return "git." + c.String() }

// LogValue keeps secrets out of slog output.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// fingerprint identifies a credential set without revealing it, so caches
// never answer a caller with other (or wrong) credentials.
func (c *Credentials) fingerprint() string {
	if c == nil {
		return "none"
	}
	h := sha256.New()
	for _, f := range [][]byte{
		[]byte(c.Username), []byte(c.Password), []byte(c.BearerToken), c.SSHPrivateKey,
		c.SSHKnownHosts, c.TLSClientCert, c.TLSClientKey, c.CACert,
	} {
		_, _ = fmt.Fprintf(h, "%d:", len(f))
		h.Write(f)
	}
	if c.Insecure {
		h.Write([]byte{1})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// secrets lists the strings that must never appear in an error.
func (c *Credentials) secrets() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, s := range []string{c.Password, c.BearerToken, string(c.SSHPrivateKey), string(c.TLSClientKey)} {
		if len(s) >= 3 {
			out = append(out, s)
		}
	}
	return out
}

// safeError carries a scrubbed message while keeping the original error
// reachable for errors.Is/As.
type safeError struct {
	msg string
	err error
}

func (e *safeError) Error() string { return e.msg }
func (e *safeError) Unwrap() error { return e.err }

// scrub returns err with every embedded URL credential and every secret of
// creds removed from its message.
func scrub(err error, creds *Credentials, extra ...string) error {
	if err == nil {
		return nil
	}
	msg := repourl.Redact(err.Error())
	for _, s := range append(creds.secrets(), extra...) {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, redacted)
		}
	}
	var se *safeError
	if errors.As(err, &se) && se.msg == msg {
		return err
	}
	return &safeError{msg: msg, err: err}
}
