package accounts

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/graphcdsecret"
)

// errUnchanged, returned by a mutation, means there is nothing to write.
var errUnchanged = errors.New("unchanged")

// writeBackoff paces waits on another writer of graphcd-secret.
var writeBackoff = wait.Backoff{Steps: 12, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// updateSecret applies mutate to a fresh read of graphcd-secret's data and
// writes the result (see graphcdsecret.Update: other packages' keys are
// kept, lost races retried). It returns the written Secret, or nil when
// mutate returned errUnchanged; another error of mutate ends it unwritten.
func updateSecret(ctx context.Context, client kubernetes.Interface, namespace string, mutate func(map[string][]byte) error) (*corev1.Secret, error) {
	var merr error
	out, err := graphcdsecret.Update(ctx, client, namespace, func(data map[string][]byte) bool {
		merr = mutate(data)
		return merr == nil
	})
	switch {
	case err != nil:
		return nil, err
	case errors.Is(merr, errUnchanged):
		return nil, nil
	case merr != nil:
		return nil, fmt.Errorf("write %s/%s: %w", namespace, SecretName, merr)
	}
	return out, nil
}
