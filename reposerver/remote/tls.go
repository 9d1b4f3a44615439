package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/graphcd/graphcd/internal/selfsigned"
)

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
		if certPEM, keyPEM, err = selfsigned.Certificate("graphcd-repo-server", opts.Hosts); err != nil {
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
