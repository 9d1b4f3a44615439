//go:build integration

package session

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/kubewatch"
)

func getSecret(t *testing.T, ns string) *corev1.Secret {
	t.Helper()
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", SecretName, err)
	}
	return sec
}

func createSecret(t *testing.T, ns string, data map[string][]byte) {
	t.Helper()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: ns}, Data: data}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s: %v", SecretName, err)
	}
}

// startKeys runs SecretKeys on ns until the test ends.
func startKeys(t *testing.T, client kubernetes.Interface, ns string) *SecretKeys {
	t.Helper()
	k := NewSecretKeys(kubewatch.NewSource(t.Context(), client, ns))
	if err := k.Start(t.Context()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return k
}

func currentKey(t *testing.T, k KeySource) Key {
	t.Helper()
	cur, _, err := k.Keys(t.Context())
	if err != nil {
		t.Fatalf("Keys: %v", err)
	}
	return cur
}

func TestSecretKeysCreateMissing(t *testing.T) {
	t.Run("no Secret", func(t *testing.T) {
		ns := cluster.Namespace(t)
		k := startKeys(t, cluster.Client, ns)
		cur := currentKey(t, k)
		sec := getSecret(t, ns)
		if !bytes.Equal(sec.Data[SecretKeyCurrent], cur.Secret) || len(cur.Secret) < MinKeySize {
			t.Errorf("key of %d bytes, Secret holds %d bytes", len(cur.Secret), len(sec.Data[SecretKeyCurrent]))
		}
		if sec.Labels["app.kubernetes.io/part-of"] != "graphcd" {
			t.Errorf("labels %v", sec.Labels)
		}
	})
	t.Run("Secret without a key", func(t *testing.T) {
		ns := cluster.Namespace(t)
		createSecret(t, ns, map[string][]byte{"admin.password": []byte("$2a$10$hash")})
		k := NewSecretKeys(kubewatch.NewSource(t.Context(), cluster.Client, ns)) // without Start: one read
		cur := currentKey(t, k)
		sec := getSecret(t, ns)
		if !bytes.Equal(sec.Data[SecretKeyCurrent], cur.Secret) {
			t.Error("the Secret does not hold the key Keys returned")
		}
		if string(sec.Data["admin.password"]) != "$2a$10$hash" {
			t.Errorf("admin.password changed to %q", sec.Data["admin.password"])
		}
	})
	t.Run("existing key kept", func(t *testing.T) {
		ns := cluster.Namespace(t)
		want := GenerateKey()
		createSecret(t, ns, map[string][]byte{SecretKeyCurrent: want.Secret})
		if got := currentKey(t, startKeys(t, cluster.Client, ns)); got.ID != want.ID {
			t.Errorf("key %s, want the stored %s", got.ID, want.ID)
		}
	})
}

// Replicas starting together against an empty namespace end up with one
// key, the one in the Secret.
func TestSecretKeysConcurrentCreators(t *testing.T) {
	ns := cluster.Namespace(t)
	const replicas = 6
	keys := make([]Key, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range replicas {
		client := kubernetes.NewForConfigOrDie(cluster.Config) // a client per replica
		wg.Go(func() {
			keys[i], _, errs[i] = NewSecretKeys(kubewatch.NewSource(t.Context(), client, ns)).Keys(t.Context())
		})
	}
	wg.Wait()
	stored := getSecret(t, ns).Data[SecretKeyCurrent]
	for i := range replicas {
		if errs[i] != nil {
			t.Errorf("replica %d: %v", i, errs[i])
			continue
		}
		if !bytes.Equal(keys[i].Secret, stored) {
			t.Errorf("replica %d uses key %s, the Secret holds another", i, keys[i].ID)
		}
	}
}

// Rotation as `graphcd admin rotate-session-key` does it, watched by a
// running issuer: tokens of the previous key keep working for one
// rotation, and the Secret's other data stays.
func TestSecretKeysRotation(t *testing.T) {
	ns := cluster.Namespace(t)
	createSecret(t, ns, map[string][]byte{"admin.password": []byte("hash"), "accounts.ci.tokens": []byte("[]")})
	k := startKeys(t, cluster.Client, ns)
	issuer := NewIssuer(k, Options{})
	issue := func() string {
		tok, _, err := issuer.Issue(t.Context(), Template{Subject: "alice"})
		if err != nil {
			t.Fatalf("Issue: %v", err)
		}
		return tok
	}
	rotate := func() {
		before := currentKey(t, k).ID
		if err := RotateKey(t.Context(), cluster.Client, ns); err != nil {
			t.Fatalf("RotateKey: %v", err)
		}
		eventually(t, "the issuer sees the new key", func() bool { return currentKey(t, k).ID != before })
	}

	first := issue()
	k1 := currentKey(t, k)
	rotate()
	if _, err := issuer.Verify(t.Context(), first); err != nil {
		t.Errorf("token of the previous key after one rotation: %v", err)
	}
	sec := getSecret(t, ns)
	if !bytes.Equal(sec.Data[SecretKeyPrevious], k1.Secret) {
		t.Error("the old key is not kept as previous")
	}
	second := issue()
	rotate()
	_, err := issuer.Verify(t.Context(), first)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("token of a key two rotations old: %v, want ErrInvalid", err)
	}
	if _, err := issuer.Verify(t.Context(), second); err != nil {
		t.Errorf("token of the previous key after the second rotation: %v", err)
	}
	sec = getSecret(t, ns)
	if string(sec.Data["admin.password"]) != "hash" || string(sec.Data["accounts.ci.tokens"]) != "[]" {
		t.Errorf("other data changed: %v", sec.Data)
	}
}

// Rotations racing other writers of the Secret lose nobody's data.
func TestRotateKeyConcurrentWriters(t *testing.T) {
	ns := cluster.Namespace(t)
	createSecret(t, ns, map[string][]byte{"admin.password": []byte("hash")})
	var wg sync.WaitGroup
	const n = 5
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Go(func() { errs <- RotateKey(t.Context(), cluster.Client, ns) })
		wg.Go(func() {
			_, err := updateSecret(t.Context(), cluster.Client, ns, func(data map[string][]byte) bool {
				data[fmt.Sprintf("other.%d", i)] = []byte("x")
				return true
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("write: %v", err)
		}
	}
	sec := getSecret(t, ns)
	for i := range n {
		if _, ok := sec.Data[fmt.Sprintf("other.%d", i)]; !ok {
			t.Errorf("other.%d lost", i)
		}
	}
	if string(sec.Data["admin.password"]) != "hash" || len(sec.Data[SecretKeyCurrent]) < MinKeySize || len(sec.Data[SecretKeyPrevious]) < MinKeySize {
		t.Errorf("data keys after the race: %v", keysOf(sec.Data))
	}
}

func keysOf(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// A Secret deleted under a running server gets a new key, which logs
// everyone out but keeps the server working.
func TestSecretKeysRecreateDeleted(t *testing.T) {
	ns := cluster.Namespace(t)
	k := startKeys(t, cluster.Client, ns)
	issuer := NewIssuer(k, Options{})
	old, _, err := issuer.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Client.CoreV1().Secrets(ns).Delete(t.Context(), SecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion is seen", func() bool { return k.keys.Load() == nil })
	tok, _, err := issuer.Issue(t.Context(), Template{Subject: "alice"})
	if err != nil {
		t.Fatalf("Issue after deletion: %v", err)
	}
	if _, err := issuer.Verify(t.Context(), tok); err != nil {
		t.Errorf("new token: %v", err)
	}
	if _, err := issuer.Verify(t.Context(), old); !errors.Is(err, ErrInvalid) {
		t.Errorf("token of the deleted key: %v, want ErrInvalid", err)
	}
	getSecret(t, ns)
}

// A weak key in the Secret is refused, without quoting it.
func TestSecretKeysShortKey(t *testing.T) {
	ns := cluster.Namespace(t)
	createSecret(t, ns, map[string][]byte{SecretKeyCurrent: []byte("hunter2")})
	err := NewSecretKeys(kubewatch.NewSource(t.Context(), cluster.Client, ns)).Start(t.Context())
	if err == nil {
		t.Fatal("Start accepted a 7-byte key")
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), SecretKeyCurrent) {
		t.Errorf("error %q", err)
	}
	if got := getSecret(t, ns).Data[SecretKeyCurrent]; string(got) != "hunter2" {
		t.Error("the key set by an administrator was replaced")
	}
}
