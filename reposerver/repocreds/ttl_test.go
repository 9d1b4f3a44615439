package repocreds

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Lookups within the TTL reuse one read of the Secrets and ConfigMaps;
// after it they read again and see changes. (A narrow unit test on the
// fake clientset, counting API calls; behaviour is tested on a real API
// server in repocreds_integration_test.go.)
func TestLookupReadsOncePerTTL(t *testing.T) {
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "ns", Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeRepository}},
		Data:       map[string][]byte{"url": []byte("https://git.example.com/a"), "username": []byte("bot"), "password": []byte("one")},
	}
	client := fake.NewClientset(sec)
	now := time.Unix(1000, 0)
	s := New(client, "ns")
	s.now = func() time.Time { return now }
	lookup := func() string {
		t.Helper()
		repo, err := s.Lookup(t.Context(), "https://git.example.com/a", "")
		if err != nil || repo.Credentials == nil {
			t.Fatalf("Lookup: %+v, %v", repo, err)
		}
		return repo.Credentials.Password
	}
	lookup()
	calls := len(client.Actions())
	lookup()
	if got := len(client.Actions()); got != calls {
		t.Errorf("second lookup within the TTL made %d API calls, want 0", got-calls)
	}
	sec.Data["password"] = []byte("two")
	if _, err := client.CoreV1().Secrets("ns").Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := lookup(); got != "one" {
		t.Errorf("within the TTL: password %q, want the cached one", got)
	}
	now = now.Add(DefaultTTL)
	if got := lookup(); got != "two" {
		t.Errorf("after the TTL: password %q, want the updated one", got)
	}
	sec.Data["password"] = []byte("three")
	if _, err := client.CoreV1().Secrets("ns").Update(t.Context(), sec, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Invalidate()
	if got := lookup(); got != "three" {
		t.Errorf("after Invalidate: password %q, want the updated one", got)
	}
}
