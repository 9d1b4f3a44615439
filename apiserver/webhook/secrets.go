package webhook

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"

	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// SecretName is the Secret holding the webhook secrets, beside the
// session keys and account passwords.
const SecretName = wellknown.Secret

// ErrSecretsNotLoaded: the secrets are not read yet, so no request can be
// checked.
var ErrSecretsNotLoaded = errors.New("webhook secrets not loaded yet")

// Secrets gives the values of graphcd-secret's webhook keys.
type Secrets interface {
	// Lookup returns the value of key, "" when unset. It fails with
	// ErrSecretsNotLoaded until the values are known.
	Lookup(key string) (string, error)
}

// StaticSecrets are fixed values, for tests and for callers that read
// the secrets themselves.
type StaticSecrets map[string]string

// Lookup implements Secrets.
func (s StaticSecrets) Lookup(key string) (string, error) { return s[key], nil }

// SecretWatch keeps the webhook keys of graphcd-secret in memory, current
// through an informer on that one Secret, so that a request costs no API
// call.
type SecretWatch struct {
	watch     *kubewatch.Source
	namespace string
	values    atomic.Pointer[map[string]string]
}

// NewSecretWatch returns a watch of SecretName in the namespace of
// watch; call Start.
func NewSecretWatch(watch *kubewatch.Source) *SecretWatch {
	return &SecretWatch{watch: watch, namespace: watch.Namespace()}
}

// Start watches the Secret until ctx ends and returns once its first
// state is loaded (a missing Secret loads as no secrets).
func (w *SecretWatch) Start(ctx context.Context) error {
	if w.namespace == "" {
		// Every namespace's graphcd-secret would do: refuse, so the
		// handler stays closed (ErrSecretsNotLoaded).
		return errors.New("webhook secrets: no namespace to read " + SecretName + " from")
	}
	err := w.watch.Secret(ctx, SecretName, func(sec *corev1.Secret) {
		if sec == nil {
			w.values.Store(&map[string]string{})
			return
		}
		w.observe(sec)
	})
	if err != nil {
		return err
	}
	// Synced with no Secret: no secrets.
	w.values.CompareAndSwap(nil, &map[string]string{})
	return nil
}

func (w *SecretWatch) observe(sec *corev1.Secret) {
	// Only the webhook keys are kept: the Secret also holds password
	// hashes and signing keys, which this package has no business with.
	vals := map[string]string{}
	for k, v := range sec.Data {
		if strings.HasPrefix(k, "webhook.") {
			// A trailing newline from `kubectl create secret --from-file`
			// is never part of what the provider was given.
			vals[k] = strings.TrimSpace(string(v))
		}
	}
	w.values.Store(&vals)
}

// Lookup implements Secrets.
func (w *SecretWatch) Lookup(key string) (string, error) {
	vals := w.values.Load()
	if vals == nil {
		return "", ErrSecretsNotLoaded
	}
	return (*vals)[key], nil
}
