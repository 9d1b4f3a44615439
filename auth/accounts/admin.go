package accounts

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// initialPasswordKey is the key of graphcd-initial-admin-secret.
const initialPasswordKey = "password"

// adminCost is bcrypt's cost for the initial admin password; tests lower it.
var adminCost = bcrypt.DefaultCost

// EnsureAdminPassword gives the admin account a password when it has none:
// a random one, stored in graphcd-initial-admin-secret (key "password") for
// the operator to read, and hashed into graphcd-secret. created reports
// whether this call generated it. Once admin.password exists nothing is
// regenerated; password is then what graphcd-initial-admin-secret still
// holds, or "" when it was deleted (as one should after the first sign-in)
// or never written by graphcd. Concurrent callers (replicas starting
// together) agree on one password.
func EnsureAdminPassword(ctx context.Context, client kubernetes.Interface, namespace string) (password string, created bool, err error) {
	secrets := client.CoreV1().Secrets(namespace)
	initial := func() (string, bool, error) {
		sec, err := secrets.Get(ctx, InitialAdminSecretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("read %s/%s: %w", namespace, InitialAdminSecretName, err)
		}
		return string(sec.Data[initialPasswordKey]), true, nil
	}
	err = wait.ExponentialBackoffWithContext(ctx, writeBackoff, func(ctx context.Context) (bool, error) {
		sec, err := secrets.Get(ctx, SecretName, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("read %s/%s: %w", namespace, SecretName, err)
		}
		if err == nil && len(sec.Data[passwordKey(Admin)]) > 0 {
			password, _, err = initial()
			return true, err
		}
		pw, found, err := initial()
		if err != nil {
			return false, err
		}
		if !found {
			pw = rand.Text()
			init := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{
					Name:      InitialAdminSecretName,
					Namespace: namespace,
					Labels:    map[string]string{"app.kubernetes.io/part-of": "graphcd"},
				},
				Type: corev1.SecretTypeOpaque,
				Data: map[string][]byte{initialPasswordKey: []byte(pw)},
			}
			_, err := secrets.Create(ctx, init, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return false, nil // another caller won; use its password
			}
			if err != nil {
				return false, fmt.Errorf("create %s/%s: %w", namespace, InitialAdminSecretName, err)
			}
			created = true
		} else if len(pw) < MinPasswordLen || len(pw) > MaxPasswordLen {
			return false, fmt.Errorf("%s/%s: key %q holds no usable password; delete the Secret to generate a new one", namespace, InitialAdminSecretName, initialPasswordKey)
		}
		hash, err := bcrypt.GenerateFromPassword([]byte(pw), adminCost)
		if err != nil {
			return false, fmt.Errorf("hash the initial admin password: %w", err)
		}
		mtime := time.Now().UTC().Format(time.RFC3339)
		_, err = updateSecret(ctx, client, namespace, func(data map[string][]byte) error {
			if len(data[passwordKey(Admin)]) > 0 {
				return errUnchanged // set meanwhile: keep it
			}
			data[passwordKey(Admin)] = hash
			data[mtimeKey(Admin)] = []byte(mtime)
			return nil
		})
		if err != nil {
			return false, err
		}
		// Read back: if someone else set admin.password meanwhile, theirs
		// stands and the next round reports it.
		return false, nil
	})
	if err != nil {
		return "", false, fmt.Errorf("ensure the admin password: %w", err)
	}
	return password, created, nil
}
