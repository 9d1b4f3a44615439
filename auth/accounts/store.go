package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/kubewatch"
)

// Errors callers branch on.
var (
	// ErrInvalidCredentials is the only error a failed password check
	// returns, whatever the reason (unknown or disabled account, no login
	// capability, no password, wrong password).
	ErrInvalidCredentials = errors.New("invalid username or password")
	// ErrNotFound means no such account.
	ErrNotFound = errors.New("account not found")
	// ErrDisabled means the account is disabled.
	ErrDisabled = errors.New("account is disabled")
	// ErrNoCapability means the account lacks the capability the
	// operation needs.
	ErrNoCapability = errors.New("account lacks the capability")
	// ErrPasswordPolicy means the new password is refused.
	ErrPasswordPolicy = errors.New("password must be 8 to 72 bytes long (bcrypt reads at most 72 bytes)")
	// ErrTokenExists means the account already has a token with that id.
	ErrTokenExists = errors.New("token id already exists")
	// ErrTokenNotFound means the account has no token with that id.
	ErrTokenNotFound = errors.New("token not found")
)

// Store serves the local accounts from a watch of graphcd-cm and
// graphcd-secret, and writes passwords and tokens to graphcd-secret.
// Reads cost no API call. Its methods are safe for concurrent use.
type Store struct {
	client    kubernetes.Interface
	namespace string
	watch     *kubewatch.Source
	// cost is bcrypt's cost for new hashes; tests lower it.
	cost int
	now  func() time.Time

	dummyOnce sync.Once
	dummy     []byte

	// rebuildMu serializes recording the watched objects and swapping the
	// snapshot, so the last rebuild always reads the newest objects.
	rebuildMu sync.Mutex
	cm        *corev1.ConfigMap
	secret    *corev1.Secret

	mu       sync.RWMutex
	snap     snapshot
	secretRV string
	changed  chan struct{} // closed and replaced on every rebuild
	started  bool
}

// NewStore returns a store of the accounts in the namespace of watch. Call
// Start before reading.
func NewStore(watch *kubewatch.Source) *Store {
	return &Store{
		client:    watch.Client(),
		namespace: watch.Namespace(),
		watch:     watch,
		cost:      bcrypt.DefaultCost,
		now:       time.Now,
		snap:      parse(nil, nil),
		changed:   make(chan struct{}),
	}
}

// Start watches graphcd-cm and graphcd-secret until ctx ends, and
// returns once both are in.
func (s *Store) Start(ctx context.Context) error {
	err := s.watch.ConfigMap(ctx, ConfigMapName, func(cm *corev1.ConfigMap) {
		s.rebuild(func() { s.cm = cm })
	})
	if err == nil {
		err = s.watch.Secret(ctx, SecretName, func(sec *corev1.Secret) {
			s.rebuild(func() { s.secret = sec })
		})
	}
	if err != nil {
		return fmt.Errorf("watch accounts: %w", err)
	}
	s.rebuild(func() {})
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	return nil
}

// rebuild records a watched object with set and parses both into a new
// snapshot.
func (s *Store) rebuild(set func()) {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	set()
	var cm map[string]string
	var secret map[string][]byte
	rv := ""
	if s.cm != nil {
		cm = s.cm.Data
	}
	if s.secret != nil {
		secret, rv = s.secret.Data, s.secret.ResourceVersion
	}
	snap := parse(cm, secret)
	s.mu.Lock()
	s.snap, s.secretRV = snap, rv
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// Get returns the account name.
func (s *Store) Get(name string) (Account, bool) {
	s.mu.RLock()
	a, ok := s.snap.accounts[name]
	s.mu.RUnlock()
	return a.clone(), ok
}

// List returns every account, sorted by name.
func (s *Store) List() []Account {
	s.mu.RLock()
	out := make([]Account, 0, len(s.snap.accounts))
	for _, a := range s.snap.accounts {
		out = append(out, a.clone())
	}
	s.mu.RUnlock()
	sortAccounts(out)
	return out
}

func sortAccounts(as []Account) {
	slices.SortFunc(as, func(a, b Account) int { return strings.Compare(a.Name, b.Name) })
}

// HasToken reports whether name is an enabled account with the apiKey
// capability that holds an unexpired token id.
func (s *Store) HasToken(name, id string) bool {
	s.mu.RLock()
	a, ok := s.snap.accounts[name]
	s.mu.RUnlock()
	if !ok || !a.Enabled || !a.HasCapability(CapabilityAPIKey) {
		return false
	}
	t, ok := a.Token(id)
	return ok && !t.Expired(s.now())
}

// AddToken records t for the account name, which must be enabled and have
// the apiKey capability. IDs are unique within the account.
func (s *Store) AddToken(ctx context.Context, name string, t Token) error {
	if t.ID == "" {
		return fmt.Errorf("add token to %s: empty token id", name)
	}
	a, ok := s.Get(name)
	switch {
	case !ok:
		return fmt.Errorf("add token to %s: %w", name, ErrNotFound)
	case !a.Enabled:
		return fmt.Errorf("add token to %s: %w", name, ErrDisabled)
	case !a.HasCapability(CapabilityAPIKey):
		return fmt.Errorf("add token to %s: %w %s", name, ErrNoCapability, CapabilityAPIKey)
	}
	return s.updateTokens(ctx, name, func(tokens []Token) ([]Token, error) {
		if slices.ContainsFunc(tokens, func(x Token) bool { return x.ID == t.ID }) {
			return nil, ErrTokenExists
		}
		return append(tokens, t), nil
	})
}

// RemoveToken deletes the token id of the account name.
func (s *Store) RemoveToken(ctx context.Context, name, id string) error {
	return s.updateTokens(ctx, name, func(tokens []Token) ([]Token, error) {
		i := slices.IndexFunc(tokens, func(x Token) bool { return x.ID == id })
		if i < 0 {
			return nil, ErrTokenNotFound
		}
		return slices.Delete(tokens, i, i+1), nil
	})
}

// updateTokens rewrites the tokens key of name with what edit returns.
// Malformed stored tokens are not overwritten: an edit would lose them.
func (s *Store) updateTokens(ctx context.Context, name string, edit func([]Token) ([]Token, error)) error {
	key := tokensKey(name)
	sec, err := updateSecret(ctx, s.client, s.namespace, func(data map[string][]byte) error {
		tokens, err := parseTokens(data[key])
		if err != nil {
			return fmt.Errorf("%s in %s: %w; fix or delete it first", key, SecretName, err)
		}
		if tokens, err = edit(tokens); err != nil {
			return err
		}
		if len(tokens) == 0 {
			delete(data, key)
			return nil
		}
		b, err := json.Marshal(tokens)
		if err != nil {
			return err
		}
		data[key] = b
		return nil
	})
	if err != nil {
		return fmt.Errorf("update tokens of %s: %w", name, err)
	}
	return s.waitFor(ctx, sec)
}

// waitFor returns once the cache holds sec or a later version of it, so a
// read after a write sees the write. It gives up quietly after a while:
// the write itself succeeded.
func (s *Store) waitFor(ctx context.Context, sec *corev1.Secret) error {
	if sec == nil {
		return nil
	}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		s.mu.RLock()
		started, rv, changed := s.started, s.secretRV, s.changed
		s.mu.RUnlock()
		if !started || reached(rv, sec.ResourceVersion) {
			return nil
		}
		select {
		case <-changed:
		case <-timeout.C:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// reached reports whether the cached resource version have is want or
// later. Resource versions are opaque, but etcd's are increasing integers.
func reached(have, want string) bool {
	if have == want {
		return true
	}
	h, err1 := strconv.ParseUint(have, 10, 64)
	w, err2 := strconv.ParseUint(want, 10, 64)
	return err1 == nil && err2 == nil && h > w
}
