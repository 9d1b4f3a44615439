//go:build integration

package reliability

import (
	"testing"
	"time"

	"github.com/graphcd/graphcd/internal/testenv/roles"
)

// startRole starts r (again), failing the test when it does not serve.
func startRole(t *testing.T, r *roles.Role) {
	t.Helper()
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// waitFor checks cond every 200 ms until it holds, failing the test with
// cond's last word after timeout (generous: it stops a hung test, it is
// not a limit the test asserts).
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %v for %s: %s", timeout, what, why)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
