package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// fuzzProviders are the dialects FuzzPayload picks from by index.
var fuzzProviders = []*provider{&github, &gitlab, &bitbucketCloud, &bitbucketServer, &gogs, &gitea, &azureDevOps}

// FuzzPayload feeds arbitrary bodies and event names to every provider's
// parser, the pull request parsers and the matcher that picks the apps to
// refresh: nothing may panic, a rejected payload yields no push, and the
// matcher never lets more than maxChangedFiles paths be checked.
//
//	go test -run '^$' -fuzz FuzzPayload ./apiserver/webhook/
func FuzzPayload(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for i, s := range seeds {
		body, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), "push", body)
	}
	f.Add(uint8(0), "pull_request", []byte(`{"repository":{"full_name":"a/b/c"}}`))
	f.Add(uint8(1), "Merge Request Hook", []byte(`{"project":{"id":1e999,"path_with_namespace":"/"}}`))
	f.Add(uint8(3), "repo:refs_changed", []byte(`{"changes":[{"ref":{"id":"refs/tags/"}}],"repository":null}`))
	f.Add(uint8(0), "push", []byte(`{"ref":"refs/heads/main","commits":[{"added":["../../x"]}],"repository":{"html_url":"ssh://[::1"}}`))

	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{
		{RepoURL: "https://github.com/a/b", TargetRevision: "main", Path: "apps/x"},
		{RepoURL: "git@github.com:a/b.git", TargetRevision: "HEAD", Ref: "values"},
	}}}
	app.Annotations = map[string]string{ManifestPathsAnnotation: ".;/shared/**;../*"}
	f.Fuzz(func(t *testing.T, which uint8, event string, body []byte) {
		p := fuzzProviders[int(which)%len(fuzzProviders)]
		h := http.Header{}
		h.Set("X-GitHub-Event", event)
		h.Set("X-Gitlab-Event", event)
		h.Set("X-Event-Key", event)
		h.Set("X-Gitea-Event", event)
		if _, isPush := p.event(h, body); isPush {
			push, err := p.parse(body)
			if err != nil {
				if len(push.RepoURLs) != 0 || len(push.Refs) != 0 {
					t.Fatalf("%s: a rejected payload gave a push: %+v (%v)", p.name, push, err)
				}
				return
			}
			m := newMatcher(push)
			if len(m.files) > maxChangedFiles {
				t.Fatalf("%s: %d files to check, more than %d", p.name, len(m.files), maxChangedFiles)
			}
			if !m.empty() {
				m.app(app)
			}
		}
		if parse, ok := pullRequestParsers[p.name]; ok {
			_, _, _ = parse(event, body)
		}
	})
}

// FuzzSignature checks that a GitHub request is accepted only with the
// body's exact HMAC under the configured secret, whatever the signature
// headers hold, and that the pre-check before the body is read never
// rejects a correct signature.
//
//	go test -run '^$' -fuzz FuzzSignature ./apiserver/webhook/
func FuzzSignature(f *testing.F) {
	const secret = "s3cret"
	f.Add("sha256=00", "sha1=", []byte(`{}`))
	f.Add(" sha256=0A", "", []byte(nil))
	f.Add("", "sha1=da39a3ee5e6b4b0d3255bfef95601890afd80709", []byte(""))
	f.Fuzz(func(t *testing.T, sig256, sig1 string, body []byte) {
		h := http.Header{}
		h["X-Hub-Signature-256"] = []string{sig256}
		h["X-Hub-Signature"] = []string{sig1}
		if github.verify(h, body, []string{secret}) != nil {
			return
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		want := hex.EncodeToString(mac.Sum(nil))
		if sig256 != "" {
			got, err := hex.DecodeString(trimSig(sig256, "sha256="))
			if err != nil || !hmac.Equal(got, mac.Sum(nil)) {
				t.Fatalf("accepted X-Hub-Signature-256 %q for a body whose HMAC is %s", sig256, want)
			}
		} else if trimSig(sig1, "sha1=") == "" {
			t.Fatalf("accepted an empty X-Hub-Signature")
		}
		if err := github.preverify(h, []string{secret}); err != nil {
			t.Fatalf("the pre-check rejected a signature the body verifies: %v", err)
		}
	})
}

// trimSig is sig without spaces around it and without prefix, "" when
// the prefix is missing.
func trimSig(sig, prefix string) string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(sig), prefix)
	if !ok {
		return ""
	}
	return rest
}
