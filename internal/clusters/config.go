package clusters

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/graphcd/graphcd/internal/kubeerror"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/tracing"
)

// restConfig builds the client configuration for server from c, and
// checks what the codec leaves to it: PEM blocks, the exec plugin, the
// proxy.
func restConfig(c *secretcodec.ClusterConfig, server string) (*rest.Config, error) {
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
	tc, err := tlsConfig(c.TLSClientConfig)
	if err != nil {
		return nil, err
	}
	rc.TLSClientConfig = tc
	if c.ExecProviderConfig != nil {
		if rc.ExecProvider, err = execConfig(c.ExecProviderConfig); err != nil {
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
	if tracing.Enabled() {
		rc.Wrap(tracing.WrapKubernetes)
	}
	return rc, nil
}

// tlsConfig checks and decodes the TLS settings.
func tlsConfig(t secretcodec.TLSClientConfig) (rest.TLSClientConfig, error) {
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

// execConfig turns the Argo CD exec settings into a client-go credential
// plugin that never prompts.
func execConfig(e *secretcodec.ExecProviderConfig) (*clientcmdapi.ExecConfig, error) {
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
