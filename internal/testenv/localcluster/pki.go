package localcluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// pki is the set of files a cluster's components are started with.
type pki struct {
	CACert, CAKey       string
	ServingCert         string
	ServingKey          string
	AdminCert, AdminKey string
	SAPublic, SAPrivate string
}

type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// newPKI writes a fresh CA, a serving certificate for 127.0.0.1, an admin
// client certificate in system:masters and a service-account key pair to dir.
func newPKI(dir string) (pki, error) {
	p := pki{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServingKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		SAPublic: filepath.Join(dir, "sa.pub"), SAPrivate: filepath.Join(dir, "sa.key"),
	}
	ca, err := issue(nil, &x509.Certificate{
		Subject:               pkix.Name{CommonName: "graphcd-local-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	})
	if err != nil {
		return pki{}, err
	}
	serving, err := issue(&ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return pki{}, err
	}
	admin, err := issue(&ca, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return pki{}, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, fmt.Errorf("generate service-account key: %w", err)
	}
	for _, w := range []struct {
		path string
		kp   keyPair
		key  string
	}{{p.CACert, ca, p.CAKey}, {p.ServingCert, serving, p.ServingKey}, {p.AdminCert, admin, p.AdminKey}} {
		if err := writePEM(w.path, "CERTIFICATE", w.kp.cert.Raw); err != nil {
			return pki{}, err
		}
		if err := writeKey(w.key, w.kp.key); err != nil {
			return pki{}, err
		}
	}
	if err := writeKey(p.SAPrivate, sa); err != nil {
		return pki{}, err
	}
	pub, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		return pki{}, fmt.Errorf("encode service-account public key: %w", err)
	}
	return p, writePEM(p.SAPublic, "PUBLIC KEY", pub)
}

// issue creates a key and a certificate from tmpl, signed by parent, or
// self-signed when parent is nil.
func issue(parent *keyPair, tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, fmt.Errorf("generate key for %s: %w", tmpl.Subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(7 * 24 * time.Hour)
	signerCert, signerKey := tmpl, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign certificate for %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{cert: cert, key: key}, nil
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writePEM(path, "PRIVATE KEY", der)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// client returns an HTTP client that trusts the cluster's CA, for probing
// the components it issued serving certificates to.
func (p pki) client() (*http.Client, error) {
	ca, err := os.ReadFile(p.CACert)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", p.CACert)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}
