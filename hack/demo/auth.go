package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// The demo's single sign-on user, a user of the embedded Dex's local
// connector in the group that the demo's RBAC policy makes admins.
const (
	ssoEmail    = "demo@graphcd.example"
	ssoPassword = "demo-sso-password" //nolint:gosec // a local demo's well-known password, printed for the user
	ssoGroup    = "demo-admins"
)

// writeAuthSettings writes the demo's graphcd-cm (its URL and an embedded
// Dex with one static user) and graphcd-rbac-cm (everyone may look, the
// SSO group may do everything).
func writeAuthSettings(ctx context.Context, client kubernetes.Interface, namespace, url string) error {
	hash, err := bcrypt.GenerateFromPassword([]byte(ssoPassword), bcrypt.DefaultCost)
	if err != nil {
		return err
	}
	dexConfig := fmt.Sprintf(`enablePasswordDB: true
staticPasswords:
- email: %s
  hash: %q
  username: demo
  userID: 6d1c5c56-0d27-4c02-9a3e-7a6fd0e0c001
  groups: [%s]
`, ssoEmail, hash, ssoGroup)
	for _, cm := range []*corev1.ConfigMap{
		{
			ObjectMeta: metav1.ObjectMeta{Name: wellknown.SettingsConfigMap, Namespace: namespace},
			Data:       map[string]string{"url": url, "dex.config": dexConfig},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: wellknown.RBACConfigMap, Namespace: namespace},
			Data: map[string]string{
				"policy.default": "role:readonly",
				"policy.csv":     "g, " + ssoGroup + ", role:admin\n",
			},
		},
	} {
		if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s: %w", cm.Name, err)
		}
	}
	return nil
}

// adminPassword waits for the server to write the admin account's initial
// password and returns it.
func adminPassword(ctx context.Context, client kubernetes.Interface, namespace string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		s, err := client.CoreV1().Secrets(namespace).Get(ctx, "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err == nil && len(s.Data["password"]) > 0 {
			return string(s.Data["password"]), nil
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", errors.New("graphcd did not write the initial admin password within a minute")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
