//go:build integration

package git

import (
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	gogit "github.com/go-git/go-git/v5"
)

func newTestClient(t testing.TB) *Client {
	t.Helper()
	return New(Options{WorkDir: t.TempDir()})
}

func TestResolveRevisionForms(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	tests := []struct{ rev, want string }{
		{"", f.commits["c3"]},
		{"HEAD", f.commits["c3"]},
		{"main", f.commits["c3"]},
		{"feature", f.commits["f1"]},
		{"v1.0.0", f.commits["c1"]}, // annotated tag, peeled
		{"v1.2.3", f.commits["c2"]},
		{"refs/tags/v2.0.0", f.commits["c3"]},
		{"refs/heads/feature", f.commits["f1"]},
		{"refs/pull/1/head", f.commits["p1"]},
		{f.commits["c2b"], f.commits["c2b"]},
		{strings.ToUpper(f.commits["c1"]), f.commits["c1"]},
		{f.commits["f1"][:7], f.commits["f1"]},   // short SHA of an advertised tip
		{f.commits["c2b"][:9], f.commits["c2b"]}, // short SHA only in history: fetched
		{">=1.2.0 <2.0.0", f.commits["c2"]},
		{"1.2.*", f.commits["c2"]},
		{"^1.2", f.commits["c2"]},
		{"~1.0", f.commits["c1"]},
		{">=2.0.0", f.commits["c3"]}, // the release candidate is not picked
		{">=2.1.0-0", f.commits["f1"]},
	}
	for _, tt := range tests {
		t.Run(tt.rev, func(t *testing.T) {
			got, err := c.ResolveRevision(t.Context(), srv.url("app.git"), basicCreds(), tt.rev)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ResolveRevision(%q) = %s, want %s", tt.rev, got, tt.want)
			}
		})
	}
	for _, rev := range []string{"no-such-branch", ">=9.0.0", "refs/heads/nope", "deadbeef"} {
		if _, err := c.ResolveRevision(t.Context(), srv.url("app.git"), basicCreds(), rev); !errors.Is(err, ErrRevisionNotFound) {
			t.Errorf("ResolveRevision(%q) err = %v, want ErrRevisionNotFound", rev, err)
		}
	}
}

func TestResolveRevisionCache(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()
	for range 3 {
		if _, err := c.ResolveRevision(ctx, srv.url("app.git"), basicCreds(), "main"); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.count("app.git", "ls-remote"); got != 1 {
		t.Errorf("ls-remote requests within TTL = %d, want 1", got)
	}
	// Another spelling of the same repository shares the cache.
	if _, err := c.ResolveRevision(ctx, srv.url("app.git/"), basicCreds(), "main"); err != nil {
		t.Fatal(err)
	}
	if got := srv.count("app.git", "ls-remote"); got != 1 {
		t.Errorf("ls-remote requests after equivalent URL = %d, want 1", got)
	}
	c.InvalidateRevision(srv.url("app.git"))
	if _, err := c.ResolveRevision(ctx, srv.url("app.git"), basicCreds(), "main"); err != nil {
		t.Fatal(err)
	}
	if got := srv.count("app.git", "ls-remote"); got != 2 {
		t.Errorf("ls-remote requests after invalidation = %d, want 2", got)
	}
	// A cached answer is never given to other (wrong) credentials.
	wrong := &Credentials{Username: testUser, Password: "wrong"}
	if _, err := c.ResolveRevision(ctx, srv.url("app.git"), wrong, "main"); !errors.Is(err, ErrAuthentication) {
		t.Errorf("wrong credentials after a cached success: err = %v, want ErrAuthentication", err)
	}
}

func TestResolveRevisionConcurrentShareOneLsRemote(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := c.ResolveRevision(t.Context(), srv.url("app.git"), basicCreds(), "^1.2"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := srv.count("app.git", "ls-remote"); got != 1 {
		t.Errorf("ls-remote requests for 50 concurrent lookups = %d, want 1", got)
	}
}

func TestAuthentication(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()
	hostURL := strings.TrimPrefix(srv.URL, "http://")

	ok := []struct {
		name  string
		url   string
		creds *Credentials
	}{
		{"basic", srv.url("app.git"), basicCreds()},
		{"token as password", srv.url("app.git"), &Credentials{Username: testUser, Password: testPassword}},
		{"bearer", srv.url("app.git"), &Credentials{BearerToken: testToken}},
		{"userinfo in URL", "http://" + testUser + ":" + testPassword + "@" + hostURL + "/app.git", nil},
	}
	for _, tt := range ok {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.TestRepository(ctx, tt.url, tt.creds); err != nil {
				t.Fatal(err)
			}
		})
	}

	bad := []struct {
		name   string
		url    string
		creds  *Credentials
		secret string
	}{
		{"wrong password", srv.url("app.git"), &Credentials{Username: testUser, Password: "Wr0ng-S3cret"}, "Wr0ng-S3cret"},
		{"wrong bearer", srv.url("app.git"), &Credentials{BearerToken: "bad-token-xyz"}, "bad-token-xyz"},
		{"no credentials", srv.url("app.git"), nil, ""},
		{"wrong password in URL", "http://" + testUser + ":Url-S3cret@" + hostURL + "/app.git", nil, "Url-S3cret"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			checks := map[string]error{
				"TestRepository": c.TestRepository(ctx, tt.url, tt.creds),
			}
			_, checks["ResolveRevision"] = c.ResolveRevision(ctx, tt.url, tt.creds, "main")
			_, checks["ListRefs"] = c.ListRefs(ctx, tt.url, tt.creds)
			_, _, checks["Checkout"] = c.Checkout(ctx, tt.url, tt.creds, f.commits["c1"], CheckoutOptions{})
			for op, err := range checks {
				if !errors.Is(err, ErrAuthentication) {
					t.Errorf("%s: err = %v, want ErrAuthentication", op, err)
					continue
				}
				if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
					t.Errorf("%s: error %q contains the secret", op, err)
				}
			}
		})
	}
}

// A commit SHA is not a key to what others fetched: once a caller with
// credentials has checked a commit out, a caller without them (or with
// wrong ones) asking for the same SHA is refused as it would be for a
// branch, instead of being handed the SHA the working copy and the
// manifest cache already hold.
func TestCommitSHANeedsAccess(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()
	sha := f.commits["c1"]
	_, release, err := c.Checkout(ctx, srv.url("app.git"), basicCreds(), sha, CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	release()
	for name, creds := range map[string]*Credentials{
		"no credentials": nil,
		"wrong password": {Username: testUser, Password: "Wr0ng-S3cret"},
	} {
		if got, err := c.ResolveRevision(ctx, srv.url("app.git"), creds, sha); !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s: ResolveRevision(%s) = %q, %v; want ErrAuthentication", name, sha, got, err)
		}
		if _, _, err := c.Checkout(ctx, srv.url("app.git"), creds, sha, CheckoutOptions{}); !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s: Checkout(%s) of the commit already checked out: %v; want ErrAuthentication", name, sha, err)
		}
	}
	before := srv.count("app.git", "ls-remote")
	for range 2 {
		if got, err := c.ResolveRevision(ctx, srv.url("app.git"), basicCreds(), strings.ToUpper(sha)); err != nil || got != sha {
			t.Errorf("with the credentials: %q, %v; want %s", got, err, sha)
		}
	}
	if n := srv.count("app.git", "ls-remote") - before; n != 0 {
		t.Errorf("two resolutions of a SHA after the checkout made %d ls-remotes, want none (the access check is cached)", n)
	}
}

func TestListRefs(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	got, err := newTestClient(t).ListRefs(t.Context(), srv.url("app.git"), basicCreds())
	if err != nil {
		t.Fatal(err)
	}
	want := Refs{
		Branches: []string{"feature", "main", "with-sub"},
		Tags:     []string{"v1.0.0", "v1.2.3", "v2.0.0", "v2.1.0-rc.1"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("ListRefs (-got +want):\n%s", diff)
	}
}

func TestTransportTricksRefusedBeforeNetwork(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()
	for _, u := range []string{
		"ext::sh -c touch% /tmp/pwned",
		"-oProxyCommand=touch /tmp/pwned",
		srv.url("app.git") + " --upload-pack=touch",
		"file://" + f.root + "/app.git",
		f.root + "/app.git",
	} {
		if _, err := c.ResolveRevision(ctx, u, basicCreds(), "main"); !errors.Is(err, ErrUnsafeURL) {
			t.Errorf("ResolveRevision(%q) err = %v, want ErrUnsafeURL", u, err)
		}
		if _, _, err := c.Checkout(ctx, u, basicCreds(), f.commits["c1"], CheckoutOptions{}); !errors.Is(err, ErrUnsafeURL) {
			t.Errorf("Checkout(%q) err = %v, want ErrUnsafeURL", u, err)
		}
	}
	for _, rev := range []string{"--upload-pack=touch /tmp/pwned", "-oProxyCommand=x"} {
		if _, err := c.ResolveRevision(ctx, srv.url("app.git"), basicCreds(), rev); !errors.Is(err, ErrInvalidRevision) {
			t.Errorf("ResolveRevision(rev %q) err = %v, want ErrInvalidRevision", rev, err)
		}
	}
	if _, _, err := c.Checkout(ctx, srv.url("app.git"), basicCreds(), "main", CheckoutOptions{}); !errors.Is(err, ErrInvalidRevision) {
		t.Errorf("Checkout(non-SHA) err = %v, want ErrInvalidRevision", err)
	}
	if got := srv.count("app.git", "ls-remote") + srv.count("app.git", "upload-pack"); got != 0 {
		t.Errorf("refused requests reached the server %d times", got)
	}
}

func TestFileURLsWhenAllowed(t *testing.T) {
	f := newFixture(t)
	c := New(Options{WorkDir: t.TempDir(), AllowFileURLs: true})
	got, err := c.ResolveRevision(t.Context(), "file://"+f.root+"/app.git", nil, "v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	if got != f.commits["c2"] {
		t.Errorf("got %s, want %s", got, f.commits["c2"])
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCheckoutConcurrentFetchOnce(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	const callers = 100
	dirs := make(chan string, callers)
	releases := make(chan func(), callers)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			dir, release, err := c.Checkout(t.Context(), srv.url("app.git"), basicCreds(), f.commits["c2"], CheckoutOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			if got := readFile(t, filepath.Join(dir, "app.yaml")); got != "version: 1.2.3\n" {
				t.Errorf("app.yaml = %q", got)
			}
			dirs <- dir
			releases <- release
		})
	}
	wg.Wait()
	close(dirs)
	close(releases)
	for r := range releases {
		r()
	}
	seen := map[string]bool{}
	for d := range dirs {
		seen[d] = true
	}
	if len(seen) != 1 {
		t.Errorf("callers got %d working copies, want 1", len(seen))
	}
	if got := srv.count("app.git", "upload-pack"); got != 1 {
		t.Errorf("upload-pack requests for %d concurrent checkouts = %d, want 1", callers, got)
	}
}

func TestCheckoutSwitchesAndCleans(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()

	dir, release, err := c.Checkout(ctx, srv.url("app.git"), basicCreds(), f.commits["c1"], CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A renderer leaves junk behind and edits a tracked file.
	writeFile(t, filepath.Join(dir, "untracked.txt"), "junk")
	writeFile(t, filepath.Join(dir, "charts", "dep.tgz"), "junk")
	writeFile(t, filepath.Join(dir, "app.yaml"), "tampered\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	release()

	for _, step := range []struct{ commit, want string }{
		{"c3", "version: 2.0.0\n"},
		{"c1", "version: 1.0.0\n"}, // already local: no fetch
		{"c1", "version: 1.0.0\n"},
	} {
		dir2, release2, err := c.Checkout(ctx, srv.url("app.git"), basicCreds(), f.commits[step.commit], CheckoutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if dir2 != dir {
			t.Errorf("working copy moved from %s to %s", dir, dir2)
		}
		if got := readFile(t, filepath.Join(dir, "app.yaml")); got != step.want {
			t.Errorf("%s: app.yaml = %q, want %q", step.commit, got, step.want)
		}
		for _, p := range []string{"untracked.txt", "charts", "link"} {
			if _, err := os.Lstat(filepath.Join(dir, p)); !os.IsNotExist(err) {
				t.Errorf("%s: %s survived the clean (err %v)", step.commit, p, err)
			}
		}
		release2()
	}
	// c1 and c3 both come from the first fetch (no SHA fetch on this server).
	if got := srv.count("app.git", "upload-pack"); got != 1 {
		t.Errorf("upload-pack requests = %d, want 1", got)
	}
	// The stored remote never carries credentials.
	cfg := readFile(t, filepath.Join(dir, ".git", "config"))
	if strings.Contains(cfg, testPassword) {
		t.Error(".git/config contains the password")
	}
}

func TestCheckoutShallowWhenServerAllowsSHA(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	dir, release, err := c.Checkout(t.Context(), srv.url("app-sha.git"), basicCreds(), f.commits["c2b"], CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readFile(t, filepath.Join(dir, "app.yaml")); got != "version: between\n" {
		t.Errorf("app.yaml = %q", got)
	}
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	shallow, err := repo.Storer.Shallow()
	if err != nil {
		t.Fatal(err)
	}
	if len(shallow) == 0 {
		t.Error("working copy is not shallow")
	}
	if _, err := repo.CommitObject(plumbingHash(f.commits["c1"])); err == nil {
		t.Error("shallow fetch brought older history (c1)")
	}
}

func TestCheckoutSubmodules(t *testing.T) {
	f := newFixture(t)
	srv := newGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()

	dir, release, err := c.Checkout(ctx, srv.url("app.git"), basicCreds(), f.commits["s1"], CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "README")); !os.IsNotExist(err) {
		t.Errorf("submodule checked out without being asked (err %v)", err)
	}
	release()

	dir, release, err = c.Checkout(ctx, srv.url("app.git"), basicCreds(), f.commits["s1"], CheckoutOptions{Submodules: true})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readFile(t, filepath.Join(dir, "lib", "README")); got != "lib v1\n" {
		t.Errorf("lib/README = %q", got)
	}
	if got := srv.count("lib.git", "upload-pack"); got != 1 {
		t.Errorf("lib.git upload-pack requests = %d, want 1", got)
	}
}

func TestTLS(t *testing.T) {
	f := newFixture(t)
	srv := newTLSGitServer(t, f)
	c := newTestClient(t)
	ctx := t.Context()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	if err := c.TestRepository(ctx, srv.url("app.git"), basicCreds()); err == nil {
		t.Error("untrusted server certificate accepted")
	}
	withCA := basicCreds()
	withCA.CACert = caPEM
	if err := c.TestRepository(ctx, srv.url("app.git"), withCA); err != nil {
		t.Errorf("with CA: %v", err)
	}
	insecure := basicCreds()
	insecure.Insecure = true
	if err := c.TestRepository(ctx, srv.url("app.git"), insecure); err != nil {
		t.Errorf("insecure: %v", err)
	}
	dir, release, err := c.Checkout(ctx, srv.url("app.git"), withCA, f.commits["c1"], CheckoutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if got := readFile(t, filepath.Join(dir, "app.yaml")); got != "version: 1.0.0\n" {
		t.Errorf("app.yaml = %q", got)
	}
}

func BenchmarkResolveRevisionCached(b *testing.B) {
	f := newFixture(b)
	srv := newGitServer(b, f)
	c := New(Options{WorkDir: b.TempDir()})
	ctx := b.Context()
	if _, err := c.ResolveRevision(ctx, srv.url("app.git"), basicCreds(), "^1.2"); err != nil {
		b.Fatal(err)
	}
	creds := basicCreds()
	for b.Loop() {
		if _, err := c.ResolveRevision(ctx, srv.url("app.git"), creds, "^1.2"); err != nil {
			b.Fatal(err)
		}
	}
}
