package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// SecretName is the Secret holding the webhook secrets, beside the
// session keys and account passwords.
const SecretName = "graphcd-secret"

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
	client    kubernetes.Interface
	namespace string
	values    atomic.Pointer[map[string]string]
}

// NewSecretWatch returns a watch of SecretName in namespace; call Start.
func NewSecretWatch(client kubernetes.Interface, namespace string) *SecretWatch {
	return &SecretWatch{client: client, namespace: namespace}
}

// Start watches the Secret until ctx ends and returns once its first
// state is loaded (a missing Secret loads as no secrets).
func (w *SecretWatch) Start(ctx context.Context) error {
	if w.namespace == "" {
		// Every namespace's graphcd-secret would do: refuse, so the
		// handler stays closed (ErrSecretsNotLoaded).
		return errors.New("webhook secrets: no namespace to read " + SecretName + " from")
	}
	factory := informers.NewSharedInformerFactoryWithOptions(w.client, 0,
		informers.WithNamespace(w.namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", SecretName).String()
		}))
	inf := factory.Core().V1().Secrets().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.observe,
		UpdateFunc: func(_, obj any) { w.observe(obj) },
		DeleteFunc: func(any) { w.values.Store(&map[string]string{}) },
	}); err != nil {
		return fmt.Errorf("watch %s/%s: %w", w.namespace, SecretName, err)
	}
	stopCh := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(stopCh)
			factory.Shutdown()
		})
	}
	factory.Start(stopCh)
	context.AfterFunc(ctx, stop)
	if !cache.WaitForCacheSync(stopCh, inf.HasSynced) {
		stop()
		return fmt.Errorf("watch %s/%s: %w", w.namespace, SecretName, context.Cause(ctx))
	}
	// Synced with no Secret: no secrets.
	w.values.CompareAndSwap(nil, &map[string]string{})
	return nil
}

func (w *SecretWatch) observe(obj any) {
	sec, ok := obj.(*corev1.Secret)
	if !ok || sec.Name != SecretName {
		return
	}
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
