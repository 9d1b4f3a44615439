package clusters

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Credentials that must never show up in an error.
const (
	testToken    = "tok-3f9a7c21e0d84b6a"
	testPassword = "pw-8d1e44c0b2a97f35"
)

// testPEM makes a self-signed certificate and its key, PEM encoded.
func testPEM(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IsCA:         true,
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// clusterSecret builds a cluster Secret named graphcd/foo from string data.
func clusterSecret(data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "graphcd", Name: "foo",
			Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster},
		},
		StringData: data,
	}
}

// jsonConfig marshals a config object for a Secret.
func jsonConfig(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestParse(t *testing.T) {
	certPEM, keyPEM := testPEM(t)
	three := 3
	tests := []struct {
		name string
		data map[string]string
		want Cluster
		rest rest.Config
	}{{
		name: "bearer token with CA",
		data: map[string]string{
			"name": "prod", "server": "https://prod.example.com:6443/",
			"namespaces": " web, ,db ", "clusterResources": "true", "project": "team", "shard": "3",
			"config": jsonConfig(t, map[string]any{
				"bearerToken":     testToken,
				"tlsClientConfig": map[string]any{"caData": b64(certPEM), "serverName": "prod.internal"},
			}),
		},
		want: Cluster{
			Name: "prod", Server: "https://prod.example.com:6443", Namespaces: []string{"web", "db"},
			ClusterResources: true, Project: "team", Shard: &three,
		},
		rest: rest.Config{
			Host: "https://prod.example.com:6443", BearerToken: testToken,
			TLSClientConfig: rest.TLSClientConfig{CAData: certPEM, ServerName: "prod.internal"},
		},
	}, {
		name: "basic auth, insecure, no name",
		data: map[string]string{
			"server": "https://10.0.0.1//",
			"config": jsonConfig(t, map[string]any{
				"username": "admin", "password": testPassword, "disableCompression": true,
				"tlsClientConfig": map[string]any{"insecure": true},
			}),
		},
		want: Cluster{Name: "https://10.0.0.1", Server: "https://10.0.0.1"},
		rest: rest.Config{
			Host: "https://10.0.0.1", Username: "admin", Password: testPassword, DisableCompression: true,
			TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		},
	}, {
		name: "client certificate",
		data: map[string]string{
			"name": "edge", "server": "https://edge", "clusterResources": "false",
			"config": jsonConfig(t, map[string]any{"tlsClientConfig": map[string]any{
				"caData": b64(certPEM), "certData": b64(certPEM), "keyData": b64(keyPEM),
			}}),
		},
		want: Cluster{Name: "edge", Server: "https://edge"},
		rest: rest.Config{Host: "https://edge", TLSClientConfig: rest.TLSClientConfig{
			CAData: certPEM, CertData: certPEM, KeyData: keyPEM,
		}},
	}, {
		name: "exec provider",
		data: map[string]string{
			"name": "eks", "server": "https://eks.example.com",
			"config": jsonConfig(t, map[string]any{"execProviderConfig": map[string]any{
				"command": "aws", "args": []string{"eks", "get-token", "--cluster-name", "prod"},
				"env":        map[string]string{"AWS_REGION": "eu-west-1", "AWS_PROFILE": "ops"},
				"apiVersion": "client.authentication.k8s.io/v1beta1", "installHint": "install the aws CLI",
			}}),
		},
		want: Cluster{Name: "eks", Server: "https://eks.example.com"},
		rest: rest.Config{Host: "https://eks.example.com", ExecProvider: &clientcmdapi.ExecConfig{
			Command: "aws", Args: []string{"eks", "get-token", "--cluster-name", "prod"},
			Env: []clientcmdapi.ExecEnvVar{
				{Name: "AWS_PROFILE", Value: "ops"}, {Name: "AWS_REGION", Value: "eu-west-1"},
			},
			APIVersion: "client.authentication.k8s.io/v1beta1", InstallHint: "install the aws CLI",
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}},
	}, {
		name: "in-cluster without config",
		data: map[string]string{"name": "local", "server": InClusterServer, "namespaces": "a"},
		want: Cluster{Name: "local", Server: InClusterServer, Namespaces: []string{"a"}, inherits: true},
		rest: rest.Config{Host: InClusterServer},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(clusterSecret(tt.data))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			gotRest := *got.RESTConfig
			got.RESTConfig, got.Labels, got.Annotations = nil, nil, nil
			tt.want.Secret = "graphcd/foo"
			if diff := cmp.Diff(*got, tt.want, cmp.AllowUnexported(Cluster{}), cmp.FilterPath(func(p cmp.Path) bool {
				return p.Last().String() == ".fingerprint"
			}, cmp.Ignore())); diff != "" {
				t.Errorf("cluster (-got +want):\n%s", diff)
			}
			if gotRest.WrapTransport == nil {
				t.Error("the rest config does not redact the API server's error answers (kubeerror.Wrap)")
			}
			gotRest.WrapTransport = nil
			if diff := cmp.Diff(gotRest, tt.rest); diff != "" {
				t.Errorf("rest config (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseProxy(t *testing.T) {
	c, err := Parse(clusterSecret(map[string]string{
		"server": "https://a", "config": `{"proxyUrl":"http://proxy.local:3128"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.RESTConfig.Proxy == nil {
		t.Fatal("proxyUrl did not set RESTConfig.Proxy")
	}
	u, err := c.RESTConfig.Proxy(nil)
	if err != nil || u.String() != "http://proxy.local:3128" {
		t.Errorf("proxy = %v, %v; want http://proxy.local:3128", u, err)
	}
}

// badSecrets are invalid Secrets, each with the message its error must
// hold. Every one carries credentials that must not leak into it.
func badSecrets(t *testing.T, certPEM, keyPEM []byte) []struct {
	name, want string
	data       map[string]string
} {
	t.Helper()
	otherCert, _ := testPEM(t)
	creds := `"bearerToken":"` + testToken + `","username":"u","password":"` + testPassword + `"`
	return []struct {
		name, want string
		data       map[string]string
	}{
		{"missing server", "cluster secret graphcd/foo: server is missing", map[string]string{"config": "{" + creds + "}"}},
		{"server with credentials", "server must not carry credentials", map[string]string{"server": "https://u:" + testPassword + "@h"}},
		{"server not a URL", "server is not a valid URL", map[string]string{"server": "https://h/%zz" + testToken}},
		{"server scheme", "must be an http or https URL", map[string]string{"server": "ftp://h"}},
		{"bad JSON", "config is not valid JSON (syntax error at byte", map[string]string{"server": "https://h", "config": `{"bearerToken": ` + testToken + `}`}},
		{"truncated JSON", "config is not valid JSON", map[string]string{"server": "https://h", "config": `{"bearerToken":"` + testToken}},
		{"wrong JSON type", "config.tlsClientConfig.insecure must be a boolean, not a JSON string", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"tlsClientConfig":{"insecure":"` + testToken + `"}}`}},
		{"bad caData base64", "cluster secret graphcd/foo: config.tlsClientConfig.caData is not base64", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"tlsClientConfig":{"caData":"%%` + testToken + `"}}`}},
		{"bad keyData base64", "config.tlsClientConfig.keyData is not base64", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"tlsClientConfig":{"certData":"` + b64(certPEM) + `","keyData":"!` + testPassword + `"}}`}},
		{"caData not PEM", "config.tlsClientConfig.caData holds no PEM certificate", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"tlsClientConfig":{"caData":"` + b64([]byte(testToken)) + `"}}`}},
		{"key without cert", "keyData is set without certData", map[string]string{
			"server": "https://h", "config": `{"tlsClientConfig":{"keyData":"` + b64(keyPEM) + `"}}`}},
		{"key does not match", "certData and keyData are not a certificate and its key", map[string]string{
			"server": "https://h", "config": `{"tlsClientConfig":{"certData":"` + b64(certPEM) + `","keyData":"` + b64([]byte("-----BEGIN EC PRIVATE KEY-----\n"+testPassword+"\n-----END EC PRIVATE KEY-----\n")) + `"}}`}},
		{"key of another certificate", "certData and keyData are not a certificate and its key", map[string]string{
			"server": "https://h", "config": `{"tlsClientConfig":{"certData":"` + b64(otherCert) + `","keyData":"` + b64(keyPEM) + `"}}`}},
		{"key as caData", "caData holds no PEM certificate", map[string]string{
			"server": "https://h", "config": `{"tlsClientConfig":{"caData":"` + b64(keyPEM) + `"}}`}},
		{"insecure with CA", "insecure cannot be combined with caData", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"tlsClientConfig":{"insecure":true,"caData":"` + b64(certPEM) + `"}}`}},
		{"username without password", "config.username and config.password must be set together", map[string]string{
			"server": "https://h", "config": `{"bearerToken":"` + testToken + `","username":"` + testPassword + `"}`}},
		{"aws auth", "config.awsAuthConfig is not supported by graphcd", map[string]string{
			"server": "https://h", "config": `{"awsAuthConfig":{"clusterName":"prod","roleARN":"` + testToken + `"}}`}},
		{"exec without command", "config.execProviderConfig.command is missing", map[string]string{
			"server": "https://h", "config": `{"execProviderConfig":{"apiVersion":"v1","env":{"TOKEN":"` + testToken + `"}}}`}},
		{"exec without apiVersion", "config.execProviderConfig.apiVersion is missing", map[string]string{
			"server": "https://h", "config": `{"execProviderConfig":{"command":"x","args":["` + testToken + `"]}}`}},
		{"bad proxy", "config.proxyUrl is not a valid http, https or socks5 URL", map[string]string{
			"server": "https://h", "config": `{` + creds + `,"proxyUrl":"ftp://u:` + testPassword + `@p"}`}},
		{"bad clusterResources", `clusterResources must be "true" or "false", got "yes"`, map[string]string{
			"server": "https://h", "clusterResources": "yes", "config": "{" + creds + "}"}},
		{"bad shard", `shard must be a non-negative integer, got "-1"`, map[string]string{
			"server": "https://h", "shard": "-1", "config": "{" + creds + "}"}},
	}
}

func TestParseRejects(t *testing.T) {
	certPEM, keyPEM := testPEM(t)
	for _, tt := range badSecrets(t, certPEM, keyPEM) {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(clusterSecret(tt.data))
			if err == nil {
				t.Fatal("Parse accepted an invalid Secret")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "cluster secret graphcd/foo: ") {
				t.Errorf("error %q does not name the Secret", err)
			}
		})
	}
}

// TestParseErrorsHoldNoSecrets checks every rejection against every piece
// of credential material in the input, raw and encoded.
func TestParseErrorsHoldNoSecrets(t *testing.T) {
	certPEM, keyPEM := testPEM(t)
	secrets := []string{testToken, testPassword, b64([]byte(testToken)), string(keyPEM[40:80]), b64(keyPEM)[40:80]}
	for _, tt := range badSecrets(t, certPEM, keyPEM) {
		_, err := Parse(clusterSecret(tt.data))
		if err == nil {
			t.Errorf("%s: Parse accepted an invalid Secret", tt.name)
			continue
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) {
				t.Errorf("%s: error %q leaks secret material %q", tt.name, err, s)
			}
		}
	}
}
