package localcluster

import (
	"encoding/base64"
	"encoding/json"
	"os"
)

// SecretConfig is the "config" of an Argo CD cluster Secret that logs in
// to c with its admin client certificate, as JSON.
func (c *Cluster) SecretConfig() (string, error) {
	tls := c.Config.TLSClientConfig
	encoded := map[string]string{}
	for key, pem := range map[string]struct {
		path   string
		inline []byte
	}{"caData": {tls.CAFile, tls.CAData}, "certData": {tls.CertFile, tls.CertData}, "keyData": {tls.KeyFile, tls.KeyData}} {
		b := pem.inline
		if len(b) == 0 {
			var err error
			if b, err = os.ReadFile(pem.path); err != nil {
				return "", err
			}
		}
		encoded[key] = base64.StdEncoding.EncodeToString(b)
	}
	cfg, err := json.Marshal(map[string]any{"tlsClientConfig": encoded})
	return string(cfg), err
}
