package accounts

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// errUnchanged, returned by a mutation, means there is nothing to write.
var errUnchanged = errors.New("unchanged")

// writeBackoff retries writes that lost a race with another writer.
var writeBackoff = wait.Backoff{Steps: 12, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// updateSecret applies mutate to a fresh read of graphcd-secret's data and
// writes the result: an update guarded by the resource version, or a create
// when the Secret is missing, retried when another writer got there first.
// Keys mutate leaves alone are kept (other packages store keys there too).
// It returns the written Secret, or nil when mutate returned errUnchanged.
func updateSecret(ctx context.Context, client kubernetes.Interface, namespace string, mutate func(map[string][]byte) error) (*corev1.Secret, error) {
	secrets := client.CoreV1().Secrets(namespace)
	var out *corev1.Secret
	err := retry.OnError(writeBackoff, func(err error) bool {
		return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
	}, func() error {
		sec, err := secrets.Get(ctx, SecretName, metav1.GetOptions{})
		create := apierrors.IsNotFound(err)
		switch {
		case create:
			sec = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Name:      SecretName,
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
		if err := mutate(data); err != nil {
			return err
		}
		sec.Data = data
		if create {
			out, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
		} else {
			out, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		}
		return err
	})
	switch {
	case errors.Is(err, errUnchanged):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("write %s/%s: %w", namespace, SecretName, err)
	}
	return out, nil
}
