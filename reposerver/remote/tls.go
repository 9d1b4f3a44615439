package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"slices"
	"time"
)

// selfSignedValidity is how long a generated certificate is valid; it is
// generated again at every start.
const selfSignedValidity = 365 * 24 * time.Hour

// SelfSignedCertificate returns a new self-signed ECDSA P-256 server
// certificate and key (PEM) for hosts (DNS names or IP addresses), plus
// localhost, the loopback addresses and the machine's host name. The
// certificate is its own CA: a client that trusts it (ClientOptions.CACert)
// verifies the server.
func SelfSignedCertificate(hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "graphcd-repo-server", Organization: []string{"graphcd"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	names := append([]string{"localhost", "127.0.0.1", "::1"}, hosts...)
	if h, err := os.Hostname(); err == nil && h != "" {
		names = append(names, h)
	}
	for _, h := range names {
		if ip := net.ParseIP(h); ip != nil {
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) && !ip.IsUnspecified() {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if h != "" && !slices.Contains(tmpl.DNSNames, h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

// Fingerprint returns the SHA-256 fingerprint (hex) of the first
// certificate in certPEM, for logs that let an operator pin it.
func Fingerprint(certPEM []byte) (string, error) {
	b, _ := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", errors.New("no PEM certificate found")
	}
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:]), nil
}

// certPool parses PEM certificates into a pool; what names the input in
// errors.
func certPool(pemCerts []byte, what string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCerts) {
		return nil, fmt.Errorf("%s: no PEM certificate found", what)
	}
	return pool, nil
}

// serverTLS builds the server's TLS configuration and returns the serving
// certificate (PEM) beside it.
func serverTLS(opts ServerOptions) (*tls.Config, []byte, error) {
	certPEM, keyPEM := opts.TLSCert, opts.TLSKey
	if (len(certPEM) == 0) != (len(keyPEM) == 0) {
		return nil, nil, errors.New("TLS certificate and key must be given together")
	}
	if len(certPEM) == 0 {
		var err error
		if certPEM, keyPEM, err = SelfSignedCertificate(opts.Hosts); err != nil {
			return nil, nil, fmt.Errorf("self-signed certificate: %w", err)
		}
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The error of X509KeyPair names no key material.
		return nil, nil, fmt.Errorf("TLS certificate: %w", err)
	}
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		NextProtos:   []string{"h2"},
	}
	if len(opts.ClientCA) > 0 {
		pool, err := certPool(opts.ClientCA, "client CA")
		if err != nil {
			return nil, nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, certPEM, nil
}

// clientTLS builds the client's TLS configuration for a server at host.
func clientTLS(opts ClientOptions, host string) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         host,
		InsecureSkipVerify: opts.Insecure, //nolint:gosec // only when the operator asks for it
		NextProtos:         []string{"h2"},
	}
	if opts.ServerName != "" {
		cfg.ServerName = opts.ServerName
	}
	if len(opts.CACert) > 0 {
		pool, err := certPool(opts.CACert, "CA certificate")
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (len(opts.ClientCert) == 0) != (len(opts.ClientKey) == 0) {
		return nil, errors.New("TLS client certificate and key must be given together")
	}
	if len(opts.ClientCert) > 0 {
		pair, err := tls.X509KeyPair(opts.ClientCert, opts.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}
