package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readFixture returns testdata/name.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testUUID is the Bitbucket Cloud webhook UUID deliveries carry when the
// test configures none.
const testUUID = "{3d9c5f0e-2b1a-4c8d-9e7f-6a5b4c3d2e1f}"

// delivery builds the request provider would send for event with body,
// proving secret the way that provider does ("" sends no proof; for
// Azure DevOps secret is "user:password").
func delivery(t *testing.T, provider, event string, body []byte, secret string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/api/webhook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	h := r.Header
	switch provider {
	case "github":
		h.Set("X-GitHub-Event", event)
		h.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
		if secret != "" {
			h.Set("X-Hub-Signature-256", "sha256="+hmacHex(secret, body))
		}
	case "gitlab":
		h.Set("X-Gitlab-Event", event)
		if secret != "" {
			h.Set("X-Gitlab-Token", secret)
		}
	case "bitbucket":
		h.Set("X-Event-Key", event)
		h.Set("X-Request-UUID", "4a5b6c7d-0000-4000-8000-000000000001")
		h.Set("X-Hook-UUID", testUUID)
		if secret != "" {
			h.Set("X-Hook-UUID", secret)
		}
	case "bitbucketserver":
		h.Set("X-Event-Key", event)
		h.Set("X-Request-Id", "9f8e7d6c-0000-4000-8000-000000000002")
		if secret != "" {
			h.Set("X-Hub-Signature", "sha256="+hmacHex(secret, body))
		}
	case "gitea":
		// Gitea sends Gogs' and GitHub's event headers as well.
		h.Set("X-Gitea-Event", event)
		h.Set("X-Gogs-Event", event)
		h.Set("X-GitHub-Event", event)
		if secret != "" {
			h.Set("X-Gitea-Signature", hmacHex(secret, body))
		}
	case "gogs":
		h.Set("X-Gogs-Event", event)
		if secret != "" {
			h.Set("X-Gogs-Signature", hmacHex(secret, body))
		}
	case "azuredevops":
		if user, pass, ok := strings.Cut(secret, ":"); ok {
			r.SetBasicAuth(user, pass)
		}
	default:
		t.Fatalf("no provider %q", provider)
	}
	return r
}

func hmacHex(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// secretsFor configures secret for provider the way delivery proves it.
func secretsFor(provider, secret string) StaticSecrets {
	switch provider {
	case "github":
		return StaticSecrets{KeyGitHub: secret}
	case "gitlab":
		return StaticSecrets{KeyGitLab: secret}
	case "bitbucket":
		return StaticSecrets{KeyBitbucketUUID: secret}
	case "bitbucketserver":
		return StaticSecrets{KeyBitbucketServer: secret}
	case "gitea", "gogs":
		return StaticSecrets{KeyGogs: secret}
	case "azuredevops":
		user, pass, _ := strings.Cut(secret, ":")
		return StaticSecrets{KeyAzureDevOpsUsername: user, KeyAzureDevOpsPassword: pass}
	}
	return nil
}

// pushCase is one provider's push fixture with the repository URL forms
// apps may use for it; the fixture pushes branch main, the default.
type pushCase struct {
	provider, event, fixture string
	// secret proves the delivery (see delivery).
	secret string
	// repoForms name the pushed repository in the ways an app may.
	repoForms []string
	// otherRepo is a neighbouring repository the push is not about.
	otherRepo string
}

var pushCases = []pushCase{
	{
		provider: "github", event: "push", fixture: "github-push.json", secret: "It's a Secret to Everybody",
		repoForms: []string{"https://github.com/team/guestbook.git", "git@github.com:team/guestbook.git", "https://GitHub.com/Team/Guestbook", "ssh://git@github.com/team/guestbook"},
		otherRepo: "https://github.com/team/guestbook-config",
	},
	{
		provider: "gitlab", event: "Push Hook", fixture: "gitlab-push.json", secret: "gitlab-token-1",
		repoForms: []string{"https://gitlab.com/team/guestbook", "git@gitlab.com:team/guestbook.git", "https://gitlab.com/team/guestbook.git/"},
		otherRepo: "https://gitlab.com/other/guestbook",
	},
	{
		provider: "bitbucket", event: "repo:push", fixture: "bitbucket-push.json", secret: "{5e4d3c2b-1a09-4f8e-8d7c-6b5a4f3e2d1c}",
		repoForms: []string{"https://bitbucket.org/team/guestbook.git", "git@bitbucket.org:team/guestbook.git", "https://ada@bitbucket.org/team/guestbook"},
		otherRepo: "https://bitbucket.org/team/guestbook2",
	},
	{
		provider: "bitbucketserver", event: "repo:refs_changed", fixture: "bitbucketserver-push.json", secret: "server-secret",
		repoForms: []string{"https://bitbucket.example.com/scm/team/guestbook.git", "ssh://git@bitbucket.example.com:7999/team/guestbook.git"},
		otherRepo: "https://bitbucket.example.com/scm/team/other.git",
	},
	{
		provider: "gitea", event: "push", fixture: "gitea-push.json", secret: "gitea-and-gogs-secret",
		repoForms: []string{"https://gitea.example.com/team/guestbook.git", "ssh://git@gitea.example.com:2222/team/guestbook.git", "git@gitea.example.com:team/guestbook.git"},
		otherRepo: "https://gitea.example.com/other/guestbook.git",
	},
	{
		provider: "gogs", event: "push", fixture: "gitea-push.json", secret: "gitea-and-gogs-secret",
		repoForms: []string{"https://gitea.example.com/team/guestbook"},
		otherRepo: "https://gitea.example.com/team/guestbook-old",
	},
	{
		provider: "azuredevops", event: "git.push", fixture: "azuredevops-push.json", secret: "hook:p4ss",
		repoForms: []string{"https://dev.azure.com/team/platform/_git/guestbook", "git@ssh.dev.azure.com:v3/team/platform/guestbook", "https://team@dev.azure.com/team/platform/_git/guestbook"},
		otherRepo: "https://dev.azure.com/team/platform/_git/guestbook-infra",
	},
}

// fixtureApp is one app a push case sets up, and whether the push
// refreshes it.
type fixtureApp struct {
	name, repoURL, target string
	want                  bool
}

// appsFor returns the apps the tests of c set up: every repository form
// tracking main, HEAD or refs/heads/main (refreshed), and the same
// repository at another branch or a commit, and another repository
// (not refreshed).
func appsFor(c pushCase) []fixtureApp {
	var apps []fixtureApp
	targets := []string{"main", "HEAD", "refs/heads/main", ""}
	for i, form := range c.repoForms {
		apps = append(apps, fixtureApp{name: "form" + string(rune('a'+i)), repoURL: form, target: targets[i%len(targets)], want: true})
	}
	return append(apps,
		fixtureApp{name: "other-branch", repoURL: c.repoForms[0], target: "develop"},
		fixtureApp{name: "commit", repoURL: c.repoForms[0], target: "59b20b8d5c6ff8d09518454d4dd8b7b30f095ab5"},
		fixtureApp{name: "tag", repoURL: c.repoForms[0], target: "v1.0.0"},
		fixtureApp{name: "other-repo", repoURL: c.otherRepo, target: "main"},
	)
}
