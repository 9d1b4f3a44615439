// Package graphcdsecret writes graphcd-secret, the Secret that sessions
// (signing keys) and local accounts (password hashes, tokens) share: each
// write changes only its own keys and never drops another writer's.
package graphcdsecret

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// Name is the Secret's name, in graphcd's namespace.
const Name = wellknown.Secret

// backoff retries writes that lost a race with another writer (another
// replica, the other package).
var backoff = wait.Backoff{Steps: 12, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// Update reads the Secret, lets mutate change a copy of its data
// (reporting whether it did) and writes it back: an Update guarded by the
// resource version, or a Create when the Secret is missing. Losing a race
// (Conflict, AlreadyExists) starts over from a fresh read, so concurrent
// writers never drop each other's keys; mutate may run more than once. It
// returns the Secret as written, or as read when mutate changed nothing.
// Errors name the Secret, never its data.
func Update(ctx context.Context, client kubernetes.Interface, namespace string, mutate func(map[string][]byte) bool) (*corev1.Secret, error) {
	secrets := client.CoreV1().Secrets(namespace)
	var out *corev1.Secret
	err := retry.OnError(backoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		sec, err := secrets.Get(ctx, Name, metav1.GetOptions{})
		missing := apierrors.IsNotFound(err)
		switch {
		case missing:
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Name:      Name,
					Namespace: namespace,
					Labels:    map[string]string{"app.kubernetes.io/part-of": "graphcd"},
				},
				Type: corev1.SecretTypeOpaque,
			}
		case err != nil:
			return err
		}
		data := maps.Clone(sec.Data)
		if data == nil {
			data = map[string][]byte{}
		}
		if !mutate(data) {
			out = sec
			return nil
		}
		sec.Data = data
		if missing {
			out, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
		} else {
			out, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("write %s/%s: %w", namespace, Name, err)
	}
	return out, nil
}
