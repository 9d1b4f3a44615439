package webhook

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // GitHub's legacy X-Hub-Signature is HMAC-SHA1, still unforgeable without the secret.
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
)

// The keys of graphcd-secret holding each provider's secret, as in Argo
// CD's argocd-secret.
const (
	KeyGitHub              = "webhook.github.secret"
	KeyGitLab              = "webhook.gitlab.secret"
	KeyBitbucketUUID       = "webhook.bitbucket.uuid"
	KeyBitbucketServer     = "webhook.bitbucketserver.secret"
	KeyGogs                = "webhook.gogs.secret"
	KeyAzureDevOpsUsername = "webhook.azuredevops.username"
	KeyAzureDevOpsPassword = "webhook.azuredevops.password" //nolint:gosec // G101: the name of a key, not a credential.
)

// Errors a provider's check or parser returns; the handler turns them into
// status codes.
var (
	// errUnauthorized: a secret is configured and the request does not
	// prove it knows it.
	errUnauthorized = errors.New("unauthorized")
	// errBadPayload: the body is not the provider's JSON.
	errBadPayload = errors.New("bad payload")
)

// provider is one Git host's webhook dialect.
type provider struct {
	name string
	// secretKeys are the graphcd-secret keys that, when any is set,
	// make verify mandatory.
	secretKeys []string
	// verify checks the request against the configured secrets (values
	// in secretKeys' order, at least one non-empty).
	verify func(h http.Header, body []byte, secrets []string) error
	// preverify checks, with the same secrets, what the headers alone
	// can show before the body is read: a header secret in full, the
	// presence and form of a signature over the body.
	preverify func(h http.Header, secrets []string) error
	// event returns the event name and whether it is a push.
	event func(h http.Header, body []byte) (string, bool)
	// parse reads a push payload.
	parse func(body []byte) (Push, error)
}

// detectByHeader names the provider whose event header the request
// carries. Gitea sends Gogs' and GitHub's headers too, so Gogs/Gitea come
// first.
func detectByHeader(h http.Header) *provider {
	switch {
	case h.Get("X-Gitea-Event") != "":
		return &gitea
	case h.Get("X-Gogs-Event") != "":
		return &gogs
	case h.Get("X-GitHub-Event") != "":
		return &github
	case h.Get("X-Gitlab-Event") != "":
		return &gitlab
	case h.Get("X-Event-Key") != "" && h.Get("X-Hook-UUID") != "":
		return &bitbucketCloud
	case h.Get("X-Event-Key") != "":
		return &bitbucketServer
	}
	return nil
}

// detectByBody tells Azure DevOps, which sends no header of its own, by
// its body.
func detectByBody(body []byte) *provider {
	var probe struct {
		EventType   string `json:"eventType"`
		PublisherID string `json:"publisherId"`
	}
	if json.Unmarshal(body, &probe) == nil && probe.EventType != "" && strings.EqualFold(probe.PublisherID, "tfs") {
		return &azureDevOps
	}
	return nil
}

// decode unmarshals a payload; null and missing fields leave zero values.
func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %s", errBadPayload, jsonProblem(err))
	}
	return nil
}

// jsonProblem describes a JSON error without quoting the body.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %q has the wrong type", typ.Field)
	default:
		return "invalid JSON"
	}
}

// checkHMAC compares sig, the hex HMAC of body under secret (with prefix
// such as "sha256=" before it), in constant time.
func checkHMAC(newHash func() hash.Hash, secret string, body []byte, prefix, sig string) error {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(sig), prefix)
	if !ok || hexSig == "" {
		return errUnauthorized
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil {
		return errUnauthorized
	}
	mac := hmac.New(newHash, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return errUnauthorized
	}
	return nil
}

// hmacShape checks that sig is prefix and then size bytes in hex: the
// form of a signature, checked before the body it signs is read.
func hmacShape(sig, prefix string, size int) error {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(sig), prefix)
	if !ok || len(hexSig) != 2*size {
		return errUnauthorized
	}
	if _, err := hex.DecodeString(hexSig); err != nil {
		return errUnauthorized
	}
	return nil
}

// headerOnly makes a verify that needs no body a preverify.
func headerOnly(verify func(h http.Header, body []byte, secrets []string) error) func(http.Header, []string) error {
	return func(h http.Header, secrets []string) error { return verify(h, nil, secrets) }
}

// equalSecret compares a presented secret with the configured one in
// constant time (the length may leak, as with any such comparison).
func equalSecret(presented, configured string) bool {
	return subtle.ConstantTimeCompare([]byte(presented), []byte(configured)) == 1
}

var github = provider{
	name:       "github",
	secretKeys: []string{KeyGitHub},
	verify: func(h http.Header, body []byte, s []string) error {
		if sig := h.Get("X-Hub-Signature-256"); sig != "" {
			return checkHMAC(sha256.New, s[0], body, "sha256=", sig)
		}
		return checkHMAC(sha1.New, s[0], body, "sha1=", h.Get("X-Hub-Signature"))
	},
	preverify: func(h http.Header, _ []string) error {
		if sig := h.Get("X-Hub-Signature-256"); sig != "" {
			return hmacShape(sig, "sha256=", sha256.Size)
		}
		return hmacShape(h.Get("X-Hub-Signature"), "sha1=", sha1.Size)
	},
	event: func(h http.Header, _ []byte) (string, bool) {
		e := h.Get("X-GitHub-Event")
		return e, e == "push"
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Ref        string   `json:"ref"`
			Commits    []commit `json:"commits"`
			Repository struct {
				HTMLURL       string `json:"html_url"`
				CloneURL      string `json:"clone_url"`
				SSHURL        string `json:"ssh_url"`
				GitURL        string `json:"git_url"`
				URL           string `json:"url"`
				DefaultBranch string `json:"default_branch"`
			} `json:"repository"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		r := p.Repository
		return Push{
			RepoURLs:      []string{r.HTMLURL, r.CloneURL, r.SSHURL, r.GitURL, r.URL},
			Refs:          refs(p.Ref),
			DefaultBranch: r.DefaultBranch,
			ChangedFiles:  changedFiles(p.Commits),
			FilesKnown:    len(p.Commits) > 0,
		}, nil
	},
}

// verifyGitLabToken checks GitLab's X-Gitlab-Token, the secret itself.
func verifyGitLabToken(h http.Header, _ []byte, s []string) error {
	if tok := h.Get("X-Gitlab-Token"); tok == "" || !equalSecret(tok, s[0]) {
		return errUnauthorized
	}
	return nil
}

var gitlab = provider{
	name:       "gitlab",
	secretKeys: []string{KeyGitLab},
	verify:     verifyGitLabToken,
	preverify:  headerOnly(verifyGitLabToken),
	event: func(h http.Header, body []byte) (string, bool) {
		e := h.Get("X-Gitlab-Event")
		switch e {
		case "Push Hook", "Tag Push Hook":
			return e, true
		case "System Hook":
			// A system hook carries its kind in the body.
			var k struct {
				EventName string `json:"event_name"`
			}
			_ = json.Unmarshal(body, &k)
			return e + " " + k.EventName, k.EventName == "push" || k.EventName == "tag_push"
		}
		return e, false
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Ref          string   `json:"ref"`
			Commits      []commit `json:"commits"`
			TotalCommits int      `json:"total_commits_count"`
			Project      struct {
				WebURL        string `json:"web_url"`
				HTTPURL       string `json:"git_http_url"`
				SSHURL        string `json:"git_ssh_url"`
				DefaultBranch string `json:"default_branch"`
			} `json:"project"`
			Repository struct {
				Homepage string `json:"homepage"`
				HTTPURL  string `json:"git_http_url"`
				SSHURL   string `json:"git_ssh_url"`
			} `json:"repository"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		return Push{
			RepoURLs: []string{
				p.Project.WebURL, p.Project.HTTPURL, p.Project.SSHURL,
				p.Repository.Homepage, p.Repository.HTTPURL, p.Repository.SSHURL,
			},
			Refs:          refs(p.Ref),
			DefaultBranch: p.Project.DefaultBranch,
			ChangedFiles:  changedFiles(p.Commits),
			// GitLab lists at most 20 commits of a bigger push.
			FilesKnown: len(p.Commits) > 0 && p.TotalCommits <= len(p.Commits),
		}, nil
	},
}

// verifyBitbucketUUID checks Bitbucket Cloud's X-Hook-UUID.
func verifyBitbucketUUID(h http.Header, _ []byte, s []string) error {
	if !equalSecret(bareUUID(h.Get("X-Hook-UUID")), bareUUID(s[0])) {
		return errUnauthorized
	}
	return nil
}

var bitbucketCloud = provider{
	name:       "bitbucket",
	secretKeys: []string{KeyBitbucketUUID},
	verify:     verifyBitbucketUUID,
	preverify:  headerOnly(verifyBitbucketUUID),
	event: func(h http.Header, _ []byte) (string, bool) {
		e := h.Get("X-Event-Key")
		return e, e == "repo:push"
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Repository struct {
				FullName string `json:"full_name"`
				Links    struct {
					HTML struct {
						Href string `json:"href"`
					} `json:"html"`
				} `json:"links"`
				MainBranch struct {
					Name string `json:"name"`
				} `json:"mainbranch"`
			} `json:"repository"`
			Push struct {
				Changes []struct {
					New *struct {
						Type string `json:"type"`
						Name string `json:"name"`
					} `json:"new"`
				} `json:"changes"`
			} `json:"push"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		push := Push{RepoURLs: []string{p.Repository.Links.HTML.Href}, DefaultBranch: p.Repository.MainBranch.Name}
		for _, c := range p.Push.Changes {
			// new is null when the branch or tag was deleted.
			if c.New != nil && c.New.Name != "" {
				push.Refs = append(push.Refs, Ref{Name: c.New.Name, Tag: c.New.Type == "tag"})
			}
		}
		return push, nil
	},
}

// bareUUID lets "{uuid}" (as Bitbucket shows it) and "uuid" compare equal.
func bareUUID(s string) string {
	return strings.ToLower(strings.Trim(strings.TrimSpace(s), "{}"))
}

var bitbucketServer = provider{
	name:       "bitbucketserver",
	secretKeys: []string{KeyBitbucketServer},
	verify: func(h http.Header, body []byte, s []string) error {
		return checkHMAC(sha256.New, s[0], body, "sha256=", h.Get("X-Hub-Signature"))
	},
	preverify: func(h http.Header, _ []string) error {
		return hmacShape(h.Get("X-Hub-Signature"), "sha256=", sha256.Size)
	},
	event: func(h http.Header, _ []byte) (string, bool) {
		e := h.Get("X-Event-Key")
		return e, e == "repo:refs_changed"
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Repository struct {
				Links struct {
					Clone []struct {
						Href string `json:"href"`
					} `json:"clone"`
				} `json:"links"`
			} `json:"repository"`
			Changes []struct {
				Ref struct {
					ID   string `json:"id"`
					Type string `json:"type"`
				} `json:"ref"`
				Type string `json:"type"`
			} `json:"changes"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		var push Push
		for _, c := range p.Repository.Links.Clone {
			push.RepoURLs = append(push.RepoURLs, c.Href)
		}
		for _, c := range p.Changes {
			if c.Type == "DELETE" || c.Ref.ID == "" {
				continue
			}
			r := shortRef(c.Ref.ID)
			r.Tag = r.Tag || strings.EqualFold(c.Ref.Type, "TAG")
			push.Refs = append(push.Refs, r)
		}
		return push, nil
	},
}

var gogs = provider{
	name:       "gogs",
	secretKeys: []string{KeyGogs},
	verify: func(h http.Header, body []byte, s []string) error {
		sig := h.Get("X-Gitea-Signature")
		if sig == "" {
			sig = h.Get("X-Gogs-Signature")
		}
		return checkHMAC(sha256.New, s[0], body, "", sig)
	},
	preverify: func(h http.Header, _ []string) error {
		sig := h.Get("X-Gitea-Signature")
		if sig == "" {
			sig = h.Get("X-Gogs-Signature")
		}
		return hmacShape(sig, "", sha256.Size)
	},
	event: func(h http.Header, _ []byte) (string, bool) {
		e := h.Get("X-Gitea-Event")
		if e == "" {
			e = h.Get("X-Gogs-Event")
		}
		return e, e == "push"
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Ref          string   `json:"ref"`
			Commits      []commit `json:"commits"`
			TotalCommits int      `json:"total_commits"`
			Repository   struct {
				HTMLURL       string `json:"html_url"`
				CloneURL      string `json:"clone_url"`
				SSHURL        string `json:"ssh_url"`
				DefaultBranch string `json:"default_branch"`
			} `json:"repository"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		r := p.Repository
		return Push{
			RepoURLs:      []string{r.HTMLURL, r.CloneURL, r.SSHURL},
			Refs:          refs(p.Ref),
			DefaultBranch: r.DefaultBranch,
			ChangedFiles:  changedFiles(p.Commits),
			FilesKnown:    len(p.Commits) > 0 && p.TotalCommits <= len(p.Commits),
		}, nil
	},
}

// gitea is Gogs' dialect under Gitea's name, for logs; Gitea signs as
// Gogs does and reads the same secret.
var gitea = func() provider {
	p := gogs
	p.name = "gitea"
	return p
}()

// verifyAzureBasicAuth checks the basic auth Azure DevOps sends.
func verifyAzureBasicAuth(h http.Header, _ []byte, s []string) error {
	r := http.Request{Header: h}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return errUnauthorized
	}
	// Both compared, always, so timing tells nothing about which failed.
	u, p := equalSecret(user, s[0]), equalSecret(pass, s[1])
	if !u || !p {
		return errUnauthorized
	}
	return nil
}

var azureDevOps = provider{
	name:       "azuredevops",
	secretKeys: []string{KeyAzureDevOpsUsername, KeyAzureDevOpsPassword},
	verify:     verifyAzureBasicAuth,
	preverify:  headerOnly(verifyAzureBasicAuth),
	event: func(_ http.Header, body []byte) (string, bool) {
		var e struct {
			EventType string `json:"eventType"`
		}
		_ = json.Unmarshal(body, &e)
		return e.EventType, e.EventType == "git.push"
	},
	parse: func(body []byte) (Push, error) {
		var p struct {
			Resource struct {
				RefUpdates []struct {
					Name        string `json:"name"`
					NewObjectID string `json:"newObjectId"`
				} `json:"refUpdates"`
				Repository struct {
					RemoteURL     string `json:"remoteUrl"`
					SSHURL        string `json:"sshUrl"`
					WebURL        string `json:"webUrl"`
					DefaultBranch string `json:"defaultBranch"`
				} `json:"repository"`
			} `json:"resource"`
		}
		if err := decode(body, &p); err != nil {
			return Push{}, err
		}
		r := p.Resource.Repository
		push := Push{RepoURLs: []string{r.RemoteURL, r.SSHURL, r.WebURL}, DefaultBranch: r.DefaultBranch}
		for _, u := range p.Resource.RefUpdates {
			// An all-zero new object id is a deletion.
			if u.Name == "" || strings.Trim(u.NewObjectID, "0") == "" && u.NewObjectID != "" {
				continue
			}
			push.Refs = append(push.Refs, shortRef(u.Name))
		}
		return push, nil
	},
}

// refs is the one ref of a single-ref push, none when ref is empty.
func refs(ref string) []Ref {
	if ref == "" {
		return nil
	}
	return []Ref{shortRef(ref)}
}

// commit is the part of a pushed commit that lists its files (GitHub,
// GitLab and Gitea/Gogs agree on it).
type commit struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// changedFiles lists the files commits touched, up to one past
// maxChangedFiles (enough for the matcher to see there were too many).
func changedFiles(commits []commit) []string {
	var out []string
	for _, c := range commits {
		for _, list := range [][]string{c.Added, c.Modified, c.Removed} {
			for _, f := range list {
				if len(out) > maxChangedFiles {
					return out
				}
				out = append(out, f)
			}
		}
	}
	return out
}
