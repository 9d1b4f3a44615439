//go:build integration

package accounts

import (
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/kubewatch"
)

func TestEnsureAdminPassword(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName}, Data: map[string][]byte{"server.secretkey": []byte("kept")}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pw, created, err := EnsureAdminPassword(ctx, cluster.Client, ns)
	if err != nil || !created || len(pw) < MinPasswordLen {
		t.Fatalf("first EnsureAdminPassword = %d bytes, %v, %v; want a password, created", len(pw), created, err)
	}
	if got := string(readSecret(t, ctx, ns, InitialAdminSecretName)["password"]); got != pw {
		t.Errorf("graphcd-initial-admin-secret holds another password")
	}
	data := readSecret(t, ctx, ns, SecretName)
	if bcrypt.CompareHashAndPassword(data["admin.password"], []byte(pw)) != nil {
		t.Errorf("admin.password is not the hash of the initial password")
	}
	if len(data["admin.passwordMtime"]) == 0 || string(data["server.secretkey"]) != "kept" {
		t.Errorf("graphcd-secret keys: passwordMtime %q, server.secretkey %q", data["admin.passwordMtime"], data["server.secretkey"])
	}

	pw2, created2, err := EnsureAdminPassword(ctx, cluster.Client, ns)
	if err != nil || created2 || pw2 != pw {
		t.Errorf("second EnsureAdminPassword: same password %v, created %v, err %v; want the same, not created", pw2 == pw, created2, err)
	}
	if got := readSecret(t, ctx, ns, SecretName)["admin.password"]; string(got) != string(data["admin.password"]) {
		t.Errorf("the second call rewrote admin.password")
	}

	s := NewStore(kubewatch.NewSource(t.Context(), cluster.Client, ns))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckPassword(ctx, Admin, pw); err != nil {
		t.Errorf("admin cannot sign in with the initial password: %v", err)
	}

	// After the operator deletes the initial secret, nothing regenerates.
	if err := cluster.Client.CoreV1().Secrets(ns).Delete(ctx, InitialAdminSecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	pw3, created3, err := EnsureAdminPassword(ctx, cluster.Client, ns)
	if err != nil || created3 || pw3 != "" {
		t.Errorf("after deleting the initial secret: %d bytes, created %v, err %v; want nothing", len(pw3), created3, err)
	}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, InitialAdminSecretName, metav1.GetOptions{}); err == nil {
		t.Errorf("the initial secret was recreated")
	}
}

// Replicas starting together agree on one password, generated once.
func TestEnsureAdminPasswordConcurrent(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	const n = 8
	type result struct {
		pw      string
		created bool
		err     error
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			pw, created, err := EnsureAdminPassword(ctx, cluster.Client, ns)
			results[i] = result{pw, created, err}
		})
	}
	wg.Wait()
	creators := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("caller %d: %v", i, r.err)
		}
		if r.pw != results[0].pw || r.pw == "" {
			t.Errorf("caller %d got another or no password", i)
		}
		if r.created {
			creators++
		}
	}
	if creators != 1 {
		t.Errorf("%d callers report creating the password, want 1", creators)
	}
	data := readSecret(t, ctx, ns, SecretName)
	if bcrypt.CompareHashAndPassword(data["admin.password"], []byte(results[0].pw)) != nil {
		t.Errorf("admin.password is not the hash of the agreed password")
	}
}
