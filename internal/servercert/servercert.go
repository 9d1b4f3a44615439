// Package servercert keeps the certificate graphcd's API server serves
// HTTPS with, and swaps it when it changes, without a restart.
//
// It comes from one of three places, as in Argo CD:
//   - files named by --tls-cert/--tls-key, read again when they change
//     (a mounted Secret, cert-manager's output);
//   - the kubernetes.io/tls Secret graphcd-server-tls in graphcd's
//     namespace, when it exists;
//   - otherwise a self-signed certificate kept in graphcd-secret (keys
//     tls.crt and tls.key), generated at the first start, so that every
//     replica and every restart serves the same one.
package servercert

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/graphcd/graphcd/internal/selfsigned"
)

// Names of the Secrets and keys the certificate is read from.
const (
	// TLSSecretName is the Secret an operator (or cert-manager) gives the
	// certificate in; it wins over the generated one.
	TLSSecretName = "graphcd-server-tls" //nolint:gosec // G101: a Secret's name, not a credential
	// KeyCert and KeyKey are the data keys of the certificate chain and
	// its private key, in both Secrets.
	KeyCert = "tls.crt"
	KeyKey  = "tls.key"
)

// CommonName names the generated certificate.
const CommonName = "graphcd-server"

// Source hands the current certificate to each TLS handshake.
type Source struct {
	cert   atomic.Pointer[tls.Certificate]
	reload func() // nil, or checks the files for a change
}

// GetCertificate is tls.Config.GetCertificate.
func (s *Source) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if s.reload != nil {
		s.reload()
	}
	c := s.cert.Load()
	if c == nil {
		return nil, errors.New("no server certificate loaded yet")
	}
	return c, nil
}

// Current returns the certificate served now (nil before the first).
func (s *Source) Current() *tls.Certificate { return s.cert.Load() }

// TLSConfig is the server's TLS configuration: TLS 1.2 or later, HTTP/2
// where the client offers it, the certificate from s.
func (s *Source) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: s.GetCertificate,
		NextProtos:     []string{"h2", "http/1.1"},
	}
}

// parse reads a PEM certificate chain and key, checking that they belong
// together. Errors never hold key material.
func parse(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	if pair.Leaf == nil {
		if pair.Leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, err
		}
	}
	return &pair, nil
}

// Fingerprint is the SHA-256 fingerprint of c's leaf, for logs.
func Fingerprint(c *tls.Certificate) string {
	if c == nil || len(c.Certificate) == 0 {
		return ""
	}
	return selfsigned.FingerprintDER(c.Certificate[0])
}

// fileCheckInterval is how often, at most, handshakes look at the files.
const fileCheckInterval = time.Second

// Files serves the certificate and key in certFile and keyFile, and
// reads them again when their size or modification time changes (checked
// at most once a second, by the handshakes themselves). A change that does
// not parse is logged and the previous certificate kept.
func Files(certFile, keyFile string, log *slog.Logger) (*Source, error) {
	f := &fileSource{certFile: certFile, keyFile: keyFile, log: log}
	cert, stamp, err := f.load()
	if err != nil {
		return nil, err
	}
	s := &Source{}
	s.cert.Store(cert)
	f.stamp = stamp
	f.checked.Store(time.Now().UnixNano())
	s.reload = func() { f.check(s) }
	return s, nil
}

type fileSource struct {
	certFile, keyFile string
	log               *slog.Logger
	checked           atomic.Int64 // UnixNano of the last look
	mu                sync.Mutex   // guards stamp and the reload
	stamp             string
}

// load reads both files and returns their certificate and change stamp.
func (f *fileSource) load() (*tls.Certificate, string, error) {
	stamp, err := f.statStamp()
	if err != nil {
		return nil, "", err
	}
	certPEM, err := os.ReadFile(f.certFile)
	if err != nil {
		return nil, "", fmt.Errorf("TLS certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(f.keyFile)
	if err != nil {
		return nil, "", fmt.Errorf("TLS key: %w", err)
	}
	cert, err := parse(certPEM, keyPEM)
	if err != nil {
		return nil, "", fmt.Errorf("TLS certificate %s with key %s: %w", f.certFile, f.keyFile, err)
	}
	return cert, stamp, nil
}

// statStamp summarises both files' size and modification time.
func (f *fileSource) statStamp() (string, error) {
	var stamp string
	for _, name := range []string{f.certFile, f.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return "", fmt.Errorf("TLS file: %w", err)
		}
		stamp += fmt.Sprintf("%d/%d;", fi.Size(), fi.ModTime().UnixNano())
	}
	return stamp, nil
}

func (f *fileSource) check(s *Source) {
	now := time.Now().UnixNano()
	last := f.checked.Load()
	if now-last < int64(fileCheckInterval) || !f.checked.CompareAndSwap(last, now) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	stamp, err := f.statStamp()
	if err != nil || stamp == f.stamp {
		return
	}
	cert, stamp, err := f.load()
	if err != nil {
		// A writer may be between the two files: try again next time.
		f.log.Warn("cannot reload the server certificate; serving the previous one", "err", err)
		return
	}
	f.stamp = stamp
	s.cert.Store(cert)
	f.log.Info("server certificate reloaded", "file", f.certFile, "sha256", Fingerprint(cert), "notAfter", cert.Leaf.NotAfter)
}
