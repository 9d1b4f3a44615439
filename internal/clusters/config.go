package clusters

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/graphcd/graphcd/internal/kubeerror"
)

// config is the JSON under a cluster Secret's "config" key, field for
// field as in Argo CD.
type config struct {
	Username           string              `json:"username"`
	Password           string              `json:"password"`
	BearerToken        string              `json:"bearerToken"`
	TLSClientConfig    tlsClientConfig     `json:"tlsClientConfig"`
	ExecProviderConfig *execProviderConfig `json:"execProviderConfig"`
	AWSAuthConfig      json.RawMessage     `json:"awsAuthConfig"`
	ProxyURL           string              `json:"proxyUrl"`
	DisableCompression bool                `json:"disableCompression"`
}

// tlsClientConfig holds base64 strings for the PEM blocks, as Argo CD
// writes them.
type tlsClientConfig struct {
	Insecure   bool   `json:"insecure"`
	ServerName string `json:"serverName"`
	CAData     string `json:"caData"`
	CertData   string `json:"certData"`
	KeyData    string `json:"keyData"`
}

// execProviderConfig runs a client-go credential plugin.
type execProviderConfig struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args"`
	Env         map[string]string `json:"env"`
	APIVersion  string            `json:"apiVersion"`
	InstallHint string            `json:"installHint"`
}

// parseConfig decodes the config JSON. Its errors quote no part of the
// input: a JSON error is reported by position or field, never by value.
func parseConfig(raw string) (*config, error) {
	cfg := &config{}
	if strings.TrimSpace(raw) == "" {
		return cfg, nil
	}
	if err := json.Unmarshal([]byte(raw), cfg); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return nil, fmt.Errorf("config is not valid JSON (syntax error at byte %d)", syntax.Offset)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("config.%s must be a %s, not a JSON %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
		default:
			return nil, errors.New("config is not valid JSON")
		}
	}
	if len(cfg.AWSAuthConfig) > 0 && !bytes.Equal(bytes.TrimSpace(cfg.AWSAuthConfig), []byte("null")) {
		return nil, errors.New("config.awsAuthConfig is not supported by graphcd; use execProviderConfig with a credential plugin (such as aws eks get-token) instead")
	}
	return cfg, nil
}

// jsonKind names a Go kind the way a JSON author thinks of it.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice":
		return "list"
	case "map", "struct":
		return "object"
	default:
		return "number"
	}
}

// hasCredentials reports whether the config logs in at all.
func (c *config) hasCredentials() bool {
	return c.BearerToken != "" || c.Username != "" || c.Password != "" ||
		c.TLSClientConfig.CertData != "" || c.TLSClientConfig.KeyData != "" || c.ExecProviderConfig != nil
}

// restConfig builds the client configuration for server.
func (c *config) restConfig(server string) (*rest.Config, error) {
	rc := &rest.Config{
		Host:               server,
		BearerToken:        c.BearerToken,
		Username:           c.Username,
		Password:           c.Password,
		DisableCompression: c.DisableCompression,
	}
	if (c.Username == "") != (c.Password == "") {
		return nil, errors.New("config.username and config.password must be set together")
	}
	tc, err := c.TLSClientConfig.rest()
	if err != nil {
		return nil, err
	}
	rc.TLSClientConfig = tc
	if c.ExecProviderConfig != nil {
		if rc.ExecProvider, err = c.ExecProviderConfig.exec(); err != nil {
			return nil, err
		}
	}
	if c.ProxyURL != "" {
		u, err := url.Parse(c.ProxyURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5") {
			return nil, errors.New("config.proxyUrl is not a valid http, https or socks5 URL")
		}
		rc.Proxy = http.ProxyURL(u)
	}
	kubeerror.Wrap(rc)
	return rc, nil
}

// rest checks and decodes the TLS settings.
func (t tlsClientConfig) rest() (rest.TLSClientConfig, error) {
	out := rest.TLSClientConfig{Insecure: t.Insecure, ServerName: t.ServerName}
	var err error
	if out.CAData, err = decodePEM("caData", t.CAData); err != nil {
		return out, err
	}
	if out.CertData, err = decodePEM("certData", t.CertData); err != nil {
		return out, err
	}
	if out.KeyData, err = decodePEM("keyData", t.KeyData); err != nil {
		return out, err
	}
	if len(out.CAData) > 0 {
		if t.Insecure {
			return out, errors.New("config.tlsClientConfig.insecure cannot be combined with caData: drop one of them")
		}
		if !x509.NewCertPool().AppendCertsFromPEM(out.CAData) {
			return out, errors.New("config.tlsClientConfig.caData holds no PEM certificate")
		}
	}
	switch {
	case len(out.CertData) > 0 && len(out.KeyData) == 0:
		return out, errors.New("config.tlsClientConfig.certData is set without keyData")
	case len(out.KeyData) > 0 && len(out.CertData) == 0:
		return out, errors.New("config.tlsClientConfig.keyData is set without certData")
	case len(out.CertData) > 0:
		// crypto/tls errors are fixed texts that quote no key material.
		if _, err := tls.X509KeyPair(out.CertData, out.KeyData); err != nil {
			return out, fmt.Errorf("config.tlsClientConfig: certData and keyData are not a certificate and its key: %w", err)
		}
	}
	return out, nil
}

// decodePEM decodes one base64 field of tlsClientConfig. Argo CD writes
// standard base64; a PEM block pasted as is is accepted too.
func decodePEM(field, value string) ([]byte, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	if strings.HasPrefix(value, "-----BEGIN ") {
		return []byte(value), nil
	}
	b, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return nil, fmt.Errorf("config.tlsClientConfig.%s is not base64", field)
	}
	return b, nil
}

// exec turns the Argo CD exec settings into a client-go credential plugin
// that never prompts.
func (e *execProviderConfig) exec() (*clientcmdapi.ExecConfig, error) {
	if strings.TrimSpace(e.Command) == "" {
		return nil, errors.New("config.execProviderConfig.command is missing")
	}
	if e.APIVersion == "" {
		return nil, errors.New("config.execProviderConfig.apiVersion is missing (for example client.authentication.k8s.io/v1beta1)")
	}
	names := make([]string, 0, len(e.Env))
	for k := range e.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	env := make([]clientcmdapi.ExecEnvVar, 0, len(names))
	for _, k := range names {
		env = append(env, clientcmdapi.ExecEnvVar{Name: k, Value: e.Env[k]})
	}
	return &clientcmdapi.ExecConfig{
		Command:         e.Command,
		Args:            slices.Clone(e.Args),
		Env:             env,
		APIVersion:      e.APIVersion,
		InstallHint:     e.InstallHint,
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}, nil
}
