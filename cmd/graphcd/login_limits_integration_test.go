//go:build integration

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clientFrom is an HTTP client whose connections leave from the loopback
// address ip, so that the server sees it as another client.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

// loginFrom posts a password login for username with c and returns the
// status and body.
func (s *authServer) loginFrom(t *testing.T, c *http.Client, username, password string) (int, string) {
	t.Helper()
	creds, _ := json.Marshal(map[string]string{"username": username, "password": password})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/auth/login", bytes.NewReader(creds))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return do(t, c, req)
}

// tryLogin is loginFrom for other goroutines than the test's: it returns
// only the status, -1 when the request failed.
func (s *authServer) tryLogin(t *testing.T, c *http.Client, username, password string) int {
	creds, _ := json.Marshal(map[string]string{"username": username, "password": password})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.base+"/auth/login", bytes.NewReader(creds))
	if err != nil {
		return -1
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return -1
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// Issue 19: five wrong guesses from anywhere locked admin out for
// everyone, and a flood of concurrent logins made a correct login fail
// with "too many sign-in attempts in progress". Against the real binary:
// an attacker at 127.0.0.2 guesses admin's password until it is refused,
// a second one at 127.0.0.3 floods concurrent logins, and the real admin
// at 127.0.0.4 still logs in during the flood; the guessing client keeps
// a clear "too many failed sign-in attempts" answer.
func TestServerLoginAttackerCannotLockOut(t *testing.T) {
	s := startAuthServer(t)
	var adminPassword string
	poll(t, "the initial admin password", func() (bool, string) {
		secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		adminPassword = string(secret.Data["password"])
		return adminPassword != "", "empty password"
	})
	guesser, flooder, user := clientFrom("127.0.0.2"), clientFrom("127.0.0.3"), clientFrom("127.0.0.4")

	for i := range 5 {
		if code, body := s.loginFrom(t, guesser, "admin", fmt.Sprint("guess-", i)); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d %s, want 401", i+1, code, body)
		}
	}
	code, body := s.loginFrom(t, guesser, "admin", "guess-5")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "too many failed sign-in attempts") {
		t.Fatalf("sixth guess: %d %s, want 429 naming the failed attempts", code, body)
	}

	// The flood runs until the real user's login has been answered.
	var done atomic.Bool
	var floodCodes sync.Map // status -> *atomic.Int64
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := 0; i < 200 && !done.Load(); i++ {
				code := s.tryLogin(t, flooder, fmt.Sprintf("flood-%d-%d", w, i), "x")
				n, _ := floodCodes.LoadOrStore(code, &atomic.Int64{})
				n.(*atomic.Int64).Add(1)
			}
		})
	}
	// Wait until the flood holds its slot: one of its logins was refused
	// as in progress.
	poll(t, "the flood to be refused as in progress", func() (bool, string) {
		n, ok := floodCodes.Load(http.StatusTooManyRequests)
		return ok && n.(*atomic.Int64).Load() > 0, "no 429 yet"
	})
	code, body = s.loginFrom(t, user, "admin", adminPassword)
	done.Store(true)
	wg.Wait()
	var token struct{ Token string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &token) != nil || token.Token == "" {
		t.Fatalf("the real admin from another address during the flood: %d %s, want 200 with a token", code, body)
	}
	if code, body := s.loginFrom(t, guesser, "admin", adminPassword); code != http.StatusTooManyRequests || !strings.Contains(body, "too many failed sign-in attempts") {
		t.Errorf("the guesser after the user's login: %d %s, want 429", code, body)
	}
	floodCodes.Range(func(k, v any) bool {
		t.Logf("flood answers: %v × %d", k, v.(*atomic.Int64).Load())
		return true
	})
}
