package secretcodec

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The cluster graphcd runs in, which needs no Secret.
const (
	// InClusterServer is the API server URL of the cluster graphcd runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the name of that cluster while no Secret renames it.
	InClusterName = "in-cluster"
)

// Cluster is a cluster Secret: where the API server is, how to log in
// (Config), and what graphcd may manage there.
type Cluster struct {
	// Name defaults to Server, as in Argo CD.
	Name string
	// Server is the API server URL in its normal form (NormaliseServer).
	Server string
	// Namespaces limits graphcd to these namespaces; empty means all.
	Namespaces []string
	// ClusterResources allows cluster-scoped resources when Namespaces is
	// set.
	ClusterResources bool
	// Project makes the cluster usable only by that AppProject.
	Project string
	// Shard pins the cluster to a controller shard; nil means hashed.
	Shard  *int
	Config ClusterConfig
}

// ClusterConfig is the JSON under a cluster Secret's "config" key, field
// for field as in Argo CD.
type ClusterConfig struct {
	Username           string              `json:"username,omitempty"`
	Password           string              `json:"password,omitempty"`
	BearerToken        string              `json:"bearerToken,omitempty"`
	TLSClientConfig    TLSClientConfig     `json:"tlsClientConfig"`
	ExecProviderConfig *ExecProviderConfig `json:"execProviderConfig,omitempty"`
	AWSAuthConfig      json.RawMessage     `json:"awsAuthConfig,omitempty"`
	ProxyURL           string              `json:"proxyUrl,omitempty"`
	DisableCompression bool                `json:"disableCompression,omitempty"`
}

// TLSClientConfig holds base64 strings for the PEM blocks, as Argo CD
// writes them.
type TLSClientConfig struct {
	Insecure   bool   `json:"insecure,omitempty"`
	ServerName string `json:"serverName,omitempty"`
	CAData     string `json:"caData,omitempty"`
	CertData   string `json:"certData,omitempty"`
	KeyData    string `json:"keyData,omitempty"`
}

// ExecProviderConfig runs a client-go credential plugin.
type ExecProviderConfig struct {
	Command     string            `json:"command"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	APIVersion  string            `json:"apiVersion"`
	InstallHint string            `json:"installHint,omitempty"`
}

// HasCredentials reports whether the config logs in at all.
func (c *ClusterConfig) HasCredentials() bool {
	return c.BearerToken != "" || c.Username != "" || c.Password != "" ||
		c.TLSClientConfig.CertData != "" || c.TLSClientConfig.KeyData != "" || c.ExecProviderConfig != nil
}

// DecodeCluster reads a cluster Secret. It checks the keys' syntax; what
// the config means for a client (PEM blocks, the exec plugin) is the
// reader's to check. On error the Cluster still holds the Name, Server
// and Project the Secret claims (the server only when it holds no "@"),
// so that a broken Secret is reported under them, and only to whom may
// see them.
func DecodeCluster(sec *corev1.Secret) (Cluster, error) {
	data := Data(sec)
	c, err := decodeCluster(data)
	if err != nil {
		// A server URL with user information is refused, and not
		// repeated: the password in it is no name.
		server := NormaliseServer(data["server"])
		if strings.Contains(server, "@") {
			server = ""
		}
		return Cluster{Name: cmp.Or(strings.TrimSpace(data["name"]), server), Server: server, Project: strings.TrimSpace(data["project"])}, keyError(sec, "cluster", "%v", err)
	}
	return c, nil
}

// decodeCluster decodes the merged data of a cluster Secret.
func decodeCluster(data map[string]string) (Cluster, error) {
	server, err := checkServer(data["server"])
	if err != nil {
		return Cluster{}, err
	}
	c := Cluster{
		Name:       strings.TrimSpace(data["name"]),
		Server:     server,
		Namespaces: splitList(data["namespaces"]),
		Project:    strings.TrimSpace(data["project"]),
	}
	if c.Name == "" {
		c.Name = server
	}
	if c.ClusterResources, err = parseBool(data, "clusterResources"); err != nil {
		return Cluster{}, fmt.Errorf("clusterResources must be \"true\" or \"false\", got %q", strings.TrimSpace(data["clusterResources"]))
	}
	if v := strings.TrimSpace(data["shard"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Cluster{}, fmt.Errorf("shard must be a non-negative integer, got %q", v)
		}
		c.Shard = &n
	}
	if err := decodeConfig(data["config"], &c.Config); err != nil {
		return Cluster{}, err
	}
	return c, nil
}

// checkServer checks an API server URL and returns its normal form. The
// URL is echoed in errors only when it holds no "@": what comes before
// one may be a password, whether or not the URL parses as having user
// information.
func checkServer(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("server is missing: set it to the cluster's API server URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("server is not a valid URL")
	}
	if u.User != nil || strings.Contains(raw, "@") {
		return "", errors.New("server must not carry credentials in the URL; put them in config")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("server %q must be an http or https URL", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server %q has no host", raw)
	}
	return NormaliseServer(raw), nil
}

// NormaliseServer returns server the way clusters are indexed and
// compared: trimmed of spaces and trailing slashes.
func NormaliseServer(server string) string {
	return strings.TrimRight(strings.TrimSpace(server), "/")
}

// splitList splits a comma list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// decodeConfig decodes the config JSON into cfg. Its errors quote no part
// of the input: a JSON error is reported by position or field, never by
// value.
func decodeConfig(raw string, cfg *ClusterConfig) error {
	if strings.TrimSpace(raw) == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(raw), cfg); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			return fmt.Errorf("config is not valid JSON (syntax error at byte %d)", syntax.Offset)
		case errors.As(err, &typ):
			return fmt.Errorf("config.%s must be a %s, not a JSON %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
		default:
			return errors.New("config is not valid JSON")
		}
	}
	if len(cfg.AWSAuthConfig) > 0 && !bytes.Equal(bytes.TrimSpace(cfg.AWSAuthConfig), []byte("null")) {
		return errors.New("config.awsAuthConfig is not supported by graphcd; use execProviderConfig with a credential plugin (such as aws eks get-token) instead")
	}
	return nil
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

// Data is what a Secret declaring c holds; its label is TypeCluster.
// Namespaces and ClusterResources are written only together.
func (c Cluster) Data() (map[string]string, error) {
	// The credentials go into the Secret, which is where they belong.
	cfg, err := json.Marshal(c.Config) //nolint:gosec // G117: see above
	if err != nil {
		return nil, err
	}
	data := map[string]string{"name": c.Name, "server": c.Server, "config": string(cfg)}
	if len(c.Namespaces) > 0 {
		data["namespaces"] = strings.Join(c.Namespaces, ",")
		data["clusterResources"] = strconv.FormatBool(c.ClusterResources)
	}
	setIf(data, "project", c.Project)
	return data, nil
}
