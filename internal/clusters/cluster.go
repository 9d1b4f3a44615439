package clusters

import (
	"crypto/sha256"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// Labels and well-known values of cluster Secrets (label names, not
// credentials).
//
//nolint:gosec // G101: these are label keys and values
const (
	// SecretTypeLabel marks a graphcd Secret with its kind.
	SecretTypeLabel = wellknown.SecretTypeLabel
	// ArgoSecretTypeLabel is Argo CD's label, accepted so that existing
	// cluster Secrets carry over unchanged.
	ArgoSecretTypeLabel = wellknown.ArgoSecretTypeLabel
	// SecretTypeCluster is the label value of a cluster Secret.
	SecretTypeCluster = "cluster"

	// InClusterServer is the API server URL of the cluster graphcd runs in.
	InClusterServer = "https://kubernetes.default.svc"
	// InClusterName is the default name of that cluster.
	InClusterName = "in-cluster"
)

// Cluster is one destination cluster: where its API server is, how to log
// in, and what graphcd may manage there.
type Cluster struct {
	// Name is the name applications use in spec.destination.name.
	Name string
	// Server is the API server URL without trailing slashes.
	Server string
	// Namespaces limits graphcd to these namespaces; empty means all.
	Namespaces []string
	// ClusterResources allows cluster-scoped resources when Namespaces is
	// set (with no Namespaces they are always allowed).
	ClusterResources bool
	// Project makes the cluster usable only by that AppProject; empty
	// means any project.
	Project string
	// Shard pins the cluster to a controller shard instead of the hashed
	// one; nil means hashed.
	Shard *int
	// Labels and Annotations are the Secret's, for cluster selection.
	Labels, Annotations map[string]string
	// RESTConfig logs in to the cluster. QPS and Burst are left at zero
	// for the caller to set. Treat it as read-only: copy it
	// (rest.CopyConfig) before changing it.
	RESTConfig *rest.Config
	// Secret is "namespace/name" of the Secret the cluster comes from;
	// empty for the built-in in-cluster cluster.
	Secret string

	// fingerprint changes whenever anything the Secret declares changes.
	fingerprint [sha256.Size]byte
	// inherits marks an in-cluster Secret without credentials: a Registry
	// gives it the controller's own RESTConfig, as Argo CD does.
	inherits bool
}

// Parse reads a cluster Secret. Its errors name the Secret and the
// offending key but never repeat a credential.
//
// A Secret for InClusterServer whose config has no credentials stands for
// the cluster graphcd runs in: Parse leaves its RESTConfig without
// credentials, and a Registry replaces it with the controller's own.
func Parse(secret *corev1.Secret) (*Cluster, error) {
	c, err := parse(secret)
	if err != nil {
		return nil, fmt.Errorf("cluster secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	return c, nil
}

func parse(secret *corev1.Secret) (*Cluster, error) {
	data := secretData(secret)
	server, err := normaliseServer(data["server"])
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Name:        strings.TrimSpace(data["name"]),
		Server:      server,
		Namespaces:  splitList(data["namespaces"]),
		Project:     strings.TrimSpace(data["project"]),
		Labels:      secret.Labels,
		Annotations: secret.Annotations,
		Secret:      secret.Namespace + "/" + secret.Name,
		fingerprint: fingerprint(data),
	}
	if c.Name == "" {
		// Argo CD falls back to the server URL too.
		c.Name = server
	}
	if v := strings.TrimSpace(data["clusterResources"]); v != "" {
		if c.ClusterResources, err = strconv.ParseBool(v); err != nil {
			return nil, fmt.Errorf("clusterResources must be \"true\" or \"false\", got %q", v)
		}
	}
	if v := strings.TrimSpace(data["shard"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("shard must be a non-negative integer, got %q", v)
		}
		c.Shard = &n
	}
	cfg, err := parseConfig(data["config"])
	if err != nil {
		return nil, err
	}
	if c.RESTConfig, err = cfg.restConfig(server); err != nil {
		return nil, err
	}
	c.inherits = server == InClusterServer && !cfg.hasCredentials()
	return c, nil
}

// secretData merges data and stringData (stringData wins, as the API
// server would when it writes the Secret).
func secretData(secret *corev1.Secret) map[string]string {
	out := make(map[string]string, len(secret.Data)+len(secret.StringData))
	for k, v := range secret.Data {
		out[k] = string(v)
	}
	for k, v := range secret.StringData {
		out[k] = v
	}
	return out
}

// normaliseServer checks an API server URL and drops trailing slashes.
// The URL is echoed in errors only when it carries no user information.
func normaliseServer(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fmt.Errorf("server is missing: set it to the cluster's API server URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("server is not a valid URL")
	}
	if u.User != nil {
		return "", fmt.Errorf("server must not carry credentials in the URL; put them in config")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("server %q must be an http or https URL", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("server %q has no host", raw)
	}
	return NormaliseServer(raw), nil
}

// NormaliseServer returns server the way clusters are indexed: trimmed of
// spaces and trailing slashes.
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

// fingerprint hashes the Secret's data in key order.
func fingerprint(data map[string]string) [sha256.Size]byte {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		_, _ = fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(data[k]), data[k])
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
