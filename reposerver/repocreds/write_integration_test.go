//go:build integration

package repocreds_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// Write credentials come from write Secrets only, and read credentials
// never push: each kind is invisible to the other's lookup.
func TestLookupWrite(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	create(t,
		secret(ns, "read", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/app.git", "username": "reader", "password": "pw-read",
		}),
		secret(ns, "write", wellknown.ArgoSecretTypeLabel, secretcodec.TypeRepositoryWrite, map[string]string{
			"url": "https://git.example.com/org/app.git", "username": "pusher", "password": "pw-write",
		}),
		secret(ns, "write-template", wellknown.SecretTypeLabel, secretcodec.TypeRepoWriteCreds, map[string]string{
			"url": "https://git.example.com/team", "bearerToken": "tok-team-write",
		}),
		secret(ns, "write-scoped", wellknown.SecretTypeLabel, secretcodec.TypeRepositoryWrite, map[string]string{
			"url": "https://git.example.com/scoped/app", "project": "team-a", "username": "a", "password": "pw-scoped",
		}),
		secret(ns, "read-only-repo", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/readonly/app", "username": "reader", "password": "pw-ro",
		}),
	)
	store := repocreds.New(cluster.Client, ns)

	read, err := store.Lookup(t.Context(), "https://git.example.com/org/app", "default")
	if err != nil {
		t.Fatal(err)
	}
	if read.Credentials == nil || read.Credentials.Password != "pw-read" {
		t.Errorf("Lookup gave %v, want the read Secret's credentials", read.Credentials)
	}
	write, err := store.LookupWrite(t.Context(), "https://git.example.com/org/app", "default")
	if err != nil {
		t.Fatal(err)
	}
	if write.Credentials == nil || write.Credentials.Username != "pusher" || write.Credentials.Password != "pw-write" {
		t.Errorf("LookupWrite gave %v, want the write Secret's credentials", write.Credentials)
	}
	tmpl, err := store.LookupWrite(t.Context(), "https://git.example.com/team/deploy.git", "default")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.Credentials == nil || tmpl.Credentials.BearerToken != "tok-team-write" {
		t.Errorf("LookupWrite under the template gave %v, want its token", tmpl.Credentials)
	}
	if _, err := store.LookupWrite(t.Context(), "https://git.example.com/scoped/app", "team-a"); err != nil {
		t.Errorf("scoped write Secret for its own project: %v", err)
	}

	for _, tc := range []struct{ name, url, project string }{
		{"read Secret never pushes", "https://git.example.com/readonly/app", "default"},
		{"another project's write Secret", "https://git.example.com/scoped/app", "team-b"},
		{"no Secret at all", "https://elsewhere.example.com/x", "default"},
	} {
		_, err := store.LookupWrite(t.Context(), tc.url, tc.project)
		if !errors.Is(err, repocreds.ErrNoWriteCredentials) {
			t.Errorf("%s: err = %v, want ErrNoWriteCredentials", tc.name, err)
			continue
		}
		for _, secret := range []string{"pw-ro", "pw-scoped", "reader"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s: error %q names %q", tc.name, err, secret)
			}
		}
	}
	list, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Errorf("List gave %d entries, want the 2 read Secrets: %+v", len(list), list)
	}
}
