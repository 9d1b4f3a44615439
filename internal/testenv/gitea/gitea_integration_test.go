//go:build integration

package gitea

import (
	"context"
	"net/http"
	"testing"
)

// A started Gitea serves its API with the admin's token: an organisation,
// a repository, a branch and a pull request round-trip.
func TestForgeRoundTrip(t *testing.T) {
	s, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	ctx := t.Context()
	if err := s.CreateOrg(ctx, "fleet"); err != nil {
		t.Fatal(err)
	}
	url, err := s.CreateRepo(ctx, "fleet", "svc")
	if err != nil {
		t.Fatal(err)
	}
	if want := s.URL + "/fleet/svc.git"; url != want {
		t.Errorf("clone URL %q, want %q", url, want)
	}
	sha, err := s.CommitFile(ctx, "fleet", "svc", "feature", "main", "app.yaml", "kind: ConfigMap\n")
	if err != nil || len(sha) != 40 {
		t.Fatalf("commit: %q, %v", sha, err)
	}
	n, err := s.OpenPullRequest(ctx, "fleet", "svc", "feature", "main", "a change")
	if err != nil {
		t.Fatal(err)
	}
	var prs []struct {
		Number int64 `json:"number"`
		Head   struct {
			SHA string `json:"sha"`
		} `json:"head"`
	}
	if err := s.Do(ctx, http.MethodGet, "/repos/fleet/svc/pulls?state=open", nil, &prs); err != nil {
		t.Fatal(err)
	}
	if len(prs) != 1 || prs[0].Number != n || prs[0].Head.SHA != sha {
		t.Fatalf("open pull requests %+v, want #%d at %s", prs, n, sha)
	}
	if err := s.ClosePullRequest(context.Background(), "fleet", "svc", n); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, http.MethodGet, "/repos/fleet/svc/pulls?state=open", nil, &prs); err != nil || len(prs) != 0 {
		t.Fatalf("after closing: %+v, %v", prs, err)
	}
}
