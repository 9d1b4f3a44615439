package clusters

import (
	"crypto/sha256"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/secretcodec"
)

// The cluster graphcd runs in, listed without a Secret.
const (
	// InClusterServer is the API server URL of the cluster graphcd runs in.
	InClusterServer = secretcodec.InClusterServer
	// InClusterName is the default name of that cluster.
	InClusterName = secretcodec.InClusterName
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
	decoded, err := secretcodec.DecodeCluster(secret)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Name:             decoded.Name,
		Server:           decoded.Server,
		Namespaces:       decoded.Namespaces,
		ClusterResources: decoded.ClusterResources,
		Project:          decoded.Project,
		Shard:            decoded.Shard,
		Labels:           secret.Labels,
		Annotations:      secret.Annotations,
		Secret:           secret.Namespace + "/" + secret.Name,
		fingerprint:      fingerprint(secretcodec.Data(secret)),
	}
	if c.RESTConfig, err = restConfig(&decoded.Config, c.Server); err != nil {
		return nil, fmt.Errorf("cluster secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	c.inherits = c.Server == InClusterServer && !decoded.Config.HasCredentials()
	return c, nil
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
