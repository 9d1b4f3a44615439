// Package bootstrap creates, inside the cluster, the Secrets a split
// (high-availability) install of graphcd needs before its Pods can start:
// the Redis password and signing keys, and the certificates of mutual TLS
// between the repository server and its clients. Nothing secret is ever
// committed to the install manifests; `graphcd install secrets` runs Ensure
// from a Job instead:
//
//	results, err := bootstrap.Ensure(ctx, clientset, "graphcd")
//	for _, r := range results {
//		fmt.Printf("secret/%s %s\n", r.Name, r.Outcome())
//	}
//
// Ensure only creates: a Secret that exists is left as it is, so running
// it again changes nothing, and a key an operator put there is kept.
package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The Secrets Ensure creates and their keys. The install manifests mount
// them by these names.
//
//nolint:gosec // G101: names of Secrets and keys, not credentials
const (
	// RedisSecret holds the Redis password and the keys that sign what
	// graphcd shares through Redis.
	RedisSecret = "graphcd-redis"
	// RedisPasswordKey is Redis's password (redis-server --requirepass,
	// graphcd --redis-password).
	RedisPasswordKey = "auth"
	// RedisSharedKey signs the live events and resource trees the
	// controllers and API replicas share (graphcd --redis-secret-file).
	RedisSharedKey = "shared.key"
	// RepoCacheKey signs the manifests the repository servers cache
	// (graphcd repo-server --cache-secret-file).
	RepoCacheKey = "cache.key"

	// RepoServerTLSSecret is the repository server's certificate
	// (kubernetes.io/tls, with the CA in ca.crt to check clients by).
	RepoServerTLSSecret = "graphcd-repo-server-tls"
	// RepoServerClientTLSSecret is the client certificate the API server
	// and the controllers present to the repository server, with the CA
	// in ca.crt to check the server by.
	RepoServerClientTLSSecret = "graphcd-repo-server-client-tls"
	// CAKey is the key of the CA certificate in both TLS Secrets.
	CAKey = "ca.crt"

	// RepoServerService is the Service name the server certificate is
	// issued for.
	RepoServerService = "graphcd-repo-server"
)

// Names lists every Secret Ensure may create, for the Role that lets it.
var Names = []string{RedisSecret, RepoServerTLSSecret, RepoServerClientTLSSecret}

// Result says what Ensure did with one Secret.
type Result struct {
	Name    string
	Created bool
}

// Outcome is "created" or "unchanged", as kubectl prints it.
func (r Result) Outcome() string {
	if r.Created {
		return "created"
	}
	return "unchanged"
}

// Ensure creates in namespace each of the Secrets that does not exist yet,
// with freshly generated values, and leaves the others alone. The two TLS
// Secrets are created together, from one CA whose private key is not
// kept: if only one of them exists, Ensure fails and says which to delete
// so that both can be generated again.
func Ensure(ctx context.Context, client kubernetes.Interface, namespace string) ([]Result, error) {
	redis, err := ensureRedis(ctx, client, namespace)
	if err != nil {
		return nil, err
	}
	tls, err := ensureRepoServerTLS(ctx, client, namespace)
	if err != nil {
		return nil, err
	}
	return append([]Result{redis}, tls...), nil
}

func ensureRedis(ctx context.Context, client kubernetes.Interface, namespace string) (Result, error) {
	r := Result{Name: RedisSecret}
	exists, err := secretExists(ctx, client, namespace, RedisSecret)
	if err != nil || exists {
		return r, err
	}
	data, err := RedisSecretData()
	if err != nil {
		return r, err
	}
	r.Created, err = create(ctx, client, secret(namespace, RedisSecret, "redis", corev1.SecretTypeOpaque, data))
	return r, err
}

func ensureRepoServerTLS(ctx context.Context, client kubernetes.Interface, namespace string) ([]Result, error) {
	server := Result{Name: RepoServerTLSSecret}
	clientRes := Result{Name: RepoServerClientTLSSecret}
	haveServer, err := secretExists(ctx, client, namespace, RepoServerTLSSecret)
	if err != nil {
		return nil, err
	}
	haveClient, err := secretExists(ctx, client, namespace, RepoServerClientTLSSecret)
	if err != nil {
		return nil, err
	}
	switch {
	case haveServer && haveClient:
		return []Result{server, clientRes}, nil
	case haveServer || haveClient:
		have, missing := RepoServerTLSSecret, RepoServerClientTLSSecret
		if haveClient {
			have, missing = missing, have
		}
		return nil, fmt.Errorf("secret %s/%s exists but %s does not, and the CA that signed it is not kept: delete %s and run again to generate both",
			namespace, have, missing, have)
	}
	pki, err := NewRepoServerPKI(RepoServerHosts(namespace), time.Now())
	if err != nil {
		return nil, err
	}
	// The server Secret first: whoever creates it also creates the client
	// Secret, so two runs at once cannot pair certificates of two CAs.
	server.Created, err = create(ctx, client, secret(namespace, RepoServerTLSSecret, "repo-server", corev1.SecretTypeTLS, map[string][]byte{
		corev1.TLSCertKey: pki.ServerCert, corev1.TLSPrivateKeyKey: pki.ServerKey, CAKey: pki.CACert,
	}))
	if err != nil || !server.Created {
		return []Result{server, clientRes}, err
	}
	clientRes.Created, err = create(ctx, client, secret(namespace, RepoServerClientTLSSecret, "repo-server", corev1.SecretTypeTLS, map[string][]byte{
		corev1.TLSCertKey: pki.ClientCert, corev1.TLSPrivateKeyKey: pki.ClientKey, CAKey: pki.CACert,
	}))
	if err == nil && !clientRes.Created {
		err = fmt.Errorf("secret %s/%s appeared while %s was being created; delete both and run again", namespace, RepoServerClientTLSSecret, RepoServerTLSSecret)
	}
	return []Result{server, clientRes}, err
}

// secret returns a Secret graphcd's install recognises as its own.
func secret(namespace, name, component string, typ corev1.SecretType, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: map[string]string{
				"app.kubernetes.io/part-of":   "graphcd",
				"app.kubernetes.io/component": component,
			},
		},
		Type: typ,
		Data: data,
	}
}

func secretExists(ctx context.Context, client kubernetes.Interface, namespace, name string) (bool, error) {
	_, err := client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("read secret %s/%s: %w", namespace, name, err)
	}
}

// create creates sec and reports whether it did; false, without an error,
// when another run created it first.
func create(ctx context.Context, client kubernetes.Interface, sec *corev1.Secret) (bool, error) {
	_, err := client.CoreV1().Secrets(sec.Namespace).Create(ctx, sec, metav1.CreateOptions{})
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsAlreadyExists(err):
		return false, nil
	default:
		// The error names the Secret, never its data.
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			return false, fmt.Errorf("create secret %s/%s: %s", sec.Namespace, sec.Name, status.Status().Message)
		}
		return false, fmt.Errorf("create secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
}
