package session

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/graphcdsecret"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// Where the keys live: the data keys of the Secret SecretName in graphcd's
// namespace. The Secret holds other data too (password hashes), which
// nothing here touches.
const (
	SecretName = graphcdsecret.Name
	// SecretKeyCurrent signs new tokens and verifies.
	SecretKeyCurrent = "server.secretkey"
	// SecretKeyPrevious verifies tokens signed before the last rotation.
	SecretKeyPrevious = "server.secretkey.previous"
)

// SecretKeys is a KeySource backed by the Secret SecretName. Start keeps an
// in-memory copy current with an informer on that one Secret, so Keys
// costs no API call; the first Keys call when the current key is missing
// creates it.
type SecretKeys struct {
	client    kubernetes.Interface
	namespace string
	watch     *kubewatch.Source
	// keys is what the Secret last said; nil when it is missing or holds
	// no current key.
	keys atomic.Pointer[keySet]
	// ensureMu lets one caller at a time create a missing key.
	ensureMu sync.Mutex
}

type keySet struct {
	current    Key
	verifyOnly []Key
	err        error
}

var _ KeySource = (*SecretKeys)(nil)

// NewSecretKeys returns a key source reading SecretName in the namespace
// of watch. Without Start it reads the Secret once, on the first Keys
// call, and never sees a rotation.
func NewSecretKeys(watch *kubewatch.Source) *SecretKeys {
	return &SecretKeys{client: watch.Client(), namespace: watch.Namespace(), watch: watch}
}

// Start watches the Secret until ctx ends, creating the current key when
// it is missing. It returns once the keys are loaded; an error means they
// could not be (the watch is then stopped).
func (s *SecretKeys) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	if err := s.watch.Secret(ctx, SecretName, s.observe); err != nil {
		cancel()
		return err
	}
	if _, _, err := s.Keys(ctx); err != nil {
		cancel() // stops the watch
		return err
	}
	context.AfterFunc(ctx, cancel) // the watch lives as long as the caller's ctx
	return nil
}

// observe records a version of the Secret; nil: it was deleted.
func (s *SecretKeys) observe(sec *corev1.Secret) {
	if sec == nil {
		s.keys.Store(nil)
		return
	}
	s.keys.Store(parseKeys(sec))
}

// parseKeys reads the keys of sec; nil when it has no current key. A
// previous key that is not a valid key is ignored: it only ever verified,
// and refusing every token for it would log everyone out.
func parseKeys(sec *corev1.Secret) *keySet {
	raw, ok := sec.Data[SecretKeyCurrent]
	if !ok || len(raw) == 0 {
		return nil
	}
	current, err := NewKey(raw)
	if err != nil {
		return &keySet{err: fmt.Errorf("%s/%s %s: %w", sec.Namespace, sec.Name, SecretKeyCurrent, err)}
	}
	ks := &keySet{current: current}
	if prev, err := NewKey(sec.Data[SecretKeyPrevious]); err == nil && prev.ID != current.ID {
		ks.verifyOnly = []Key{prev}
	}
	return ks
}

// Keys returns the keys of the Secret; the slice is shared, not to be
// modified. When the Secret or its current key is missing it creates
// them, agreeing with any other replica doing the same.
func (s *SecretKeys) Keys(ctx context.Context) (Key, []Key, error) {
	ks := s.keys.Load()
	if ks == nil {
		var err error
		if ks, err = s.ensure(ctx); err != nil {
			return Key{}, nil, err
		}
	}
	return ks.current, ks.verifyOnly, ks.err
}

// ensure makes sure the Secret has a current key and returns the keys.
func (s *SecretKeys) ensure(ctx context.Context) (*keySet, error) {
	s.ensureMu.Lock()
	defer s.ensureMu.Unlock()
	if ks := s.keys.Load(); ks != nil {
		return ks, nil // another caller got here first
	}
	sec, err := updateSecret(ctx, s.client, s.namespace, func(data map[string][]byte) bool {
		if len(data[SecretKeyCurrent]) > 0 {
			return false
		}
		data[SecretKeyCurrent] = GenerateKey().Secret
		return true
	})
	if err != nil {
		return nil, err
	}
	ks := parseKeys(sec)
	if ks == nil { // cannot happen: the mutation ensured a key
		return nil, fmt.Errorf("%s/%s has no %s", s.namespace, SecretName, SecretKeyCurrent)
	}
	s.keys.Store(ks)
	return ks, nil
}

// RotateKey makes a new current key in the Secret SecretName of namespace
// and keeps the old one as previous, which verifies the tokens it signed
// until the next rotation. Other data keys of the Secret are kept. It
// creates the Secret when missing.
func RotateKey(ctx context.Context, client kubernetes.Interface, namespace string) error {
	_, err := updateSecret(ctx, client, namespace, func(data map[string][]byte) bool {
		if cur := data[SecretKeyCurrent]; len(cur) > 0 {
			data[SecretKeyPrevious] = cur
		}
		data[SecretKeyCurrent] = GenerateKey().Secret
		return true
	})
	return err
}

// updateSecret writes graphcd-secret; see graphcdsecret.Update.
var updateSecret = graphcdsecret.Update
