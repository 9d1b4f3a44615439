//go:build integration

package git

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// logOf is what TestLog compares of a history: subject and tags by SHA.
func logOf(commits []Commit) []string {
	out := make([]string, len(commits))
	for i, c := range commits {
		out[i] = c.SHA + " " + c.Subject() + " " + strings.Join(c.Tags, ",")
	}
	return out
}

func TestLog(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	line := func(name, tags string) string { return f.commits[name] + " " + name + " " + tags }
	main := []string{line("c3", "v2.0.0"), line("c2b", ""), line("c2", "v1.2.3"), line("c1", "v1.0.0")}

	for _, repo := range []string{"app.git", "app-sha.git"} {
		t.Run(repo, func(t *testing.T) {
			for _, checkoutFirst := range []bool{false, true} {
				c := newTestClient(t)
				if checkoutFirst { // on app-sha.git, a shallow copy to deepen
					_, release, err := c.Checkout(t.Context(), srv.url(repo), basicCreds(), f.commits["c3"], CheckoutOptions{})
					if err != nil {
						t.Fatal(err)
					}
					release()
				}
				got, err := c.Log(t.Context(), srv.url(repo), basicCreds(), f.commits["c3"], 10)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(logOf(got), main); diff != "" {
					t.Errorf("checkout first %v: log (-got +want):\n%s", checkoutFirst, diff)
				}
				want := Commit{
					SHA: f.commits["c3"], Author: Person{Name: "test", Email: "test@example.com"},
					Date: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), Message: "c3\n", Tags: []string{"v2.0.0"},
				}
				if diff := cmp.Diff(got[0], want); diff != "" {
					t.Errorf("newest commit (-got +want):\n%s", diff)
				}
			}
			c := newTestClient(t)
			got, err := c.Log(t.Context(), srv.url(repo), basicCreds(), f.commits["f1"], 2)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(logOf(got), []string{line("f1", "v2.1.0-rc.1"), line("c3", "v2.0.0")}); diff != "" {
				t.Errorf("feature, 2 commits (-got +want):\n%s", diff)
			}
		})
	}
}

func TestLogRefusals(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	for _, rev := range []string{"main", f.commits["c3"][:10], "--upload-pack=x"} {
		if _, err := c.Log(t.Context(), srv.url("app.git"), basicCreds(), rev, 5); !errors.Is(err, ErrInvalidRevision) {
			t.Errorf("Log(%q) err = %v, want ErrInvalidRevision", rev, err)
		}
	}
	if _, err := c.Log(t.Context(), srv.url("app.git"), basicCreds(), strings.Repeat("ab", 20), 5); !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("unknown commit: err = %v, want ErrRevisionNotFound", err)
	}
	wrong := &Credentials{Username: testUser, Password: "wrong-password-123"}
	_, err := c.Log(t.Context(), srv.url("app.git"), wrong, f.commits["c3"], 5)
	if !errors.Is(err, ErrAuthentication) || strings.Contains(err.Error(), "wrong-password-123") {
		t.Errorf("wrong password: err = %v, want ErrAuthentication without the password", err)
	}
	if got, err := c.Log(t.Context(), srv.url("app.git"), basicCreds(), f.commits["c3"], 0); err != nil || len(got) != 0 {
		t.Errorf("limit 0: %d commits, err %v; want none", len(got), err)
	}
}
