package bootstrap

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// signingKeyBytes is the size of the random keys that sign shared data;
// graphcd requires 32 bytes or more. They are stored hex-encoded.
const signingKeyBytes = 32

// certValidity is how long the generated CA and certificates are valid.
// Deleting both TLS Secrets and running Ensure again replaces them.
const certValidity = 10 * 365 * 24 * time.Hour

// RedisSecretData returns new values for RedisSecret: a random password
// (rand.Text, 26 base32 characters: 130 bits) and two random signing keys.
func RedisSecretData() (map[string][]byte, error) {
	data := map[string][]byte{RedisPasswordKey: []byte(rand.Text())}
	for _, k := range []string{RedisSharedKey, RepoCacheKey} {
		b := make([]byte, signingKeyBytes)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("generate %s: %w", k, err)
		}
		data[k] = []byte(hex.EncodeToString(b))
	}
	return data, nil
}

// RepoServerHosts are the DNS names the repository server certificate is
// valid for: its Service, by the short, namespaced and service names.
func RepoServerHosts(namespace string) []string {
	return []string{
		RepoServerService,
		RepoServerService + "." + namespace,
		RepoServerService + "." + namespace + ".svc",
	}
}

// RepoServerPKI is a CA and the two certificates it signed, all PEM: one
// for the repository server (server authentication, for hosts) and one
// for its clients (client authentication). The CA's private key is
// discarded once they are signed.
type RepoServerPKI struct {
	CACert                []byte
	ServerCert, ServerKey []byte
	ClientCert, ClientKey []byte
}

// validity is the time span every certificate of one RepoServerPKI gets.
type validity struct{ notBefore, notAfter time.Time }

// NewRepoServerPKI generates a CA and signs a server certificate for hosts
// and a client certificate with it, valid from an hour before now (clock
// skew) for certValidity. Keys are ECDSA P-256.
func NewRepoServerPKI(hosts []string, now time.Time) (*RepoServerPKI, error) {
	p := &RepoServerPKI{}
	v := validity{notBefore: now.Add(-time.Hour).UTC().Truncate(time.Second), notAfter: now.Add(certValidity).UTC().Truncate(time.Second)}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl, err := v.template("graphcd-repo-server-ca")
	if err != nil {
		return nil, err
	}
	caTmpl.IsCA, caTmpl.MaxPathLenZero = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p.CACert = pemBlock("CERTIFICATE", caDER)

	if p.ServerCert, p.ServerKey, err = v.leaf(ca, caKey, "graphcd-repo-server", x509.ExtKeyUsageServerAuth, hosts); err != nil {
		return nil, err
	}
	if p.ClientCert, p.ClientKey, err = v.leaf(ca, caKey, "graphcd-repo-server-client", x509.ExtKeyUsageClientAuth, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// template starts a certificate with a random serial and the validity.
func (v validity) template(commonName string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	return &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName, Organization: []string{"graphcd"}},
		NotBefore:             v.notBefore,
		NotAfter:              v.notAfter,
		BasicConstraintsValid: true,
	}, nil
}

// leaf signs a certificate for one use with the CA and returns it and its
// new key, PEM.
func (v validity) leaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, commonName string, usage x509.ExtKeyUsage, dnsNames []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate %s key: %w", commonName, err)
	}
	tmpl, err := v.template(commonName)
	if err != nil {
		return nil, nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	tmpl.DNSNames = dnsNames
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign %s certificate: %w", commonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s key: %w", commonName, err)
	}
	return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
