package notifications

import (
	"cmp"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/services"
)

// received is one request a stand-in for a service's API got.
type received struct {
	method, path, auth, contentType string
	body                            []byte
}

// receiver stands in for a service's HTTP API: it records each request
// and answers with reply.
func receiver(t *testing.T, status int, reply string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// send renders template "t" (message: text) for dest and sends it
// through the service configured by key and settings.
func send(t *testing.T, key, settings string, secret map[string][]byte, dest services.Destination, tmpl string) {
	t.Helper()
	c, err := Parse(map[string]string{key: settings, "template.t": tmpl}, secret)
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.Render(app(t, failedApp), dest, "t")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Sender(dest.Service)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(*n, dest); err != nil {
		t.Fatal(c.Redact(err.Error()))
	}
}

// Each service sends the request its API documents, with the credential
// from the Secret: checked on a stand-in server per service.
func TestServicesRequests(t *testing.T) {
	const message = "message: 'Sync of {{.app.metadata.name}} failed'"
	t.Run("slack chat.postMessage", func(t *testing.T) {
		srv, got := receiver(t, 200, `{"ok": true, "channel": "C1", "ts": "1.2"}`)
		send(t, "service.slack", "token: $slack-token\napiURL: "+srv.URL+"/api/\n", map[string][]byte{"slack-token": []byte("xoxb-secret")},
			services.Destination{Service: "slack", Recipient: "deploys"}, message)
		r := <-got
		form, _ := url.ParseQuery(string(r.body))
		// Slack takes the token as a bearer header or a form field.
		token := cmp.Or(strings.TrimPrefix(r.auth, "Bearer "), form.Get("token"))
		if r.method != "POST" || r.path != "/api/chat.postMessage" || token != "xoxb-secret" || form.Get("channel") != "deploys" || form.Get("text") != "Sync of shop failed" {
			t.Errorf("request %s %s auth %q body %s", r.method, r.path, r.auth, r.body)
		}
	})
	t.Run("teams incoming webhook", func(t *testing.T) {
		srv, got := receiver(t, 200, "1")
		send(t, "service.teams", "recipientUrls:\n  ops: "+srv.URL+"/webhookb2/ops\n", nil,
			services.Destination{Service: "teams", Recipient: "ops"}, message+"\nteams:\n  title: '{{.app.metadata.name}}'")
		r := <-got
		var card map[string]any
		_ = json.Unmarshal(r.body, &card)
		if r.method != "POST" || r.path != "/webhookb2/ops" || card["@type"] != "MessageCard" || card["text"] != "Sync of shop failed" || card["title"] != "shop" {
			t.Errorf("request %s %s body %s", r.method, r.path, r.body)
		}
	})
	t.Run("mattermost posts", func(t *testing.T) {
		srv, got := receiver(t, 201, `{"id": "p1"}`)
		send(t, "service.mattermost", "apiURL: "+srv.URL+"\ntoken: $mm-token\n", map[string][]byte{"mm-token": []byte("mm-secret")},
			services.Destination{Service: "mattermost", Recipient: "channel-1"}, message)
		r := <-got
		var post map[string]any
		_ = json.Unmarshal(r.body, &post)
		if r.method != "POST" || r.path != "/api/v4/posts" || r.auth != "Bearer mm-secret" || post["channel_id"] != "channel-1" || post["message"] != "Sync of shop failed" {
			t.Errorf("request %s %s auth %q body %s", r.method, r.path, r.auth, r.body)
		}
	})
	t.Run("google chat webhook", func(t *testing.T) {
		srv, got := receiver(t, 200, `{}`)
		send(t, "service.googlechat", "webhooks:\n  room: "+srv.URL+"/v1/spaces/AAA/messages?key=k\n", nil,
			services.Destination{Service: "googlechat", Recipient: "room"}, message)
		r := <-got
		var msg map[string]any
		_ = json.Unmarshal(r.body, &msg)
		if r.method != "POST" || r.path != "/v1/spaces/AAA/messages" || msg["text"] != "Sync of shop failed" {
			t.Errorf("request %s %s body %s", r.method, r.path, r.body)
		}
	})
	t.Run("opsgenie alerts", func(t *testing.T) {
		srv, got := receiver(t, 202, `{"result": "Request will be processed", "took": 0.1, "requestId": "r1"}`)
		// apiUrl is a host, as api.opsgenie.com or api.eu.opsgenie.com.
		send(t, "service.opsgenie", "apiUrl: "+strings.TrimPrefix(srv.URL, "http://")+"\napiKeys:\n  platform: $opsgenie-key\n", map[string][]byte{"opsgenie-key": []byte("og-secret")},
			services.Destination{Service: "opsgenie", Recipient: "platform"}, message+"\nopsgenie:\n  description: '{{.app.status.operationState.message}}'\n  priority: P2")
		r := <-got
		var alert map[string]any
		_ = json.Unmarshal(r.body, &alert)
		if r.method != "POST" || r.path != "/v2/alerts" || r.auth != "GenieKey og-secret" || alert["message"] != "Sync of shop failed" || alert["priority"] != "P2" ||
			!strings.Contains(alert["description"].(string), "failed to apply") {
			t.Errorf("request %s %s auth %q body %s", r.method, r.path, r.auth, r.body)
		}
	})
}

// githubAPI stands in for GitHub's REST API: it answers the calls the
// GitHub service makes (an installation token, deployments, the pull
// requests of a commit, their comments) and records every request.
func githubAPI(t *testing.T, existingComment string) (*httptest.Server, <-chan received) {
	t.Helper()
	got := make(chan received, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b}
		w.Header().Set("Content-Type", "application/json")
		p := strings.TrimPrefix(r.URL.Path, "/api/v3")
		reply, status := `{}`, http.StatusCreated
		switch {
		case strings.HasSuffix(p, "/access_tokens"):
			reply = `{"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"}`
		case r.Method == http.MethodGet && p == "/repos/example/shop/deployments":
			reply, status = `[]`, http.StatusOK
		case r.Method == http.MethodPost && p == "/repos/example/shop/deployments":
			reply = `{"id": 42}`
		case r.Method == http.MethodGet && p == "/repos/example/shop/commits/abc123/pulls":
			reply, status = `[{"number": 7}]`, http.StatusOK
		case r.Method == http.MethodGet && p == "/repos/example/shop/issues/7/comments":
			b, _ := json.Marshal([]map[string]any{{"id": 99, "body": existingComment}})
			reply, status = string(b), http.StatusOK
		case r.Method == http.MethodPatch:
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// sendGitHub sends template "t" through a GitHub App service pointed at
// api (GitHub Enterprise's base URL form).
func sendGitHub(t *testing.T, api, tmpl string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	send(t, "service.github", "appID: 12345\ninstallationID: 7\nenterpriseBaseURL: "+api+"/api/v3\nprivateKey: $github-key\n",
		map[string][]byte{"github-key": pemKey}, services.Destination{Service: "github"}, tmpl)
}

// next takes the next recorded request and checks its method and path
// (with the query), and that it carries the installation token.
func next(t *testing.T, got <-chan received, method, path string) map[string]any {
	t.Helper()
	r := <-got
	if r.method != method || r.path != path || r.auth != "token ghs_installation" {
		t.Fatalf("request %s %s auth %q, want %s %s with the installation token", r.method, r.path, r.auth, method, path)
	}
	var body map[string]any
	_ = json.Unmarshal(r.body, &body)
	return body
}

// The GitHub service, as a GitHub App: it trades a JWT signed with the
// app's key for an installation token, then calls the API the template
// asks for on the synced revision: a commit status, a deployment with a
// deployment status, a comment on the pull requests of the commit.
func TestGitHub(t *testing.T) {
	const head = `message: "Sync of {{.app.metadata.name}} failed"
github:
  repoURLPath: "{{.app.spec.source.repoURL}}"
  revisionPath: "{{.app.status.sync.revision}}"
`
	token := func(t *testing.T, got <-chan received) {
		t.Helper()
		r := <-got
		if r.method != "POST" || r.path != "/api/v3/app/installations/7/access_tokens" || !strings.HasPrefix(r.auth, "Bearer ey") {
			t.Fatalf("token request %s %s auth %.12q", r.method, r.path, r.auth)
		}
	}
	t.Run("commit status", func(t *testing.T) {
		srv, got := githubAPI(t, "")
		sendGitHub(t, srv.URL, head+`  status:
    state: failure
    label: continuous-delivery/{{.app.metadata.name}}
    targetURL: https://cd.example.com/applications/{{.app.metadata.name}}`)
		token(t, got)
		body := next(t, got, "POST", "/api/v3/repos/example/shop/statuses/abc123")
		if body["state"] != "failure" || body["context"] != "continuous-delivery/shop" || body["description"] != "Sync of shop failed" ||
			body["target_url"] != "https://cd.example.com/applications/shop" {
			t.Errorf("status %v", body)
		}
	})
	t.Run("deployment", func(t *testing.T) {
		srv, got := githubAPI(t, "")
		sendGitHub(t, srv.URL, head+`  deployment:
    state: failure
    environment: production
    environmentURL: https://shop.example.com
    logURL: https://cd.example.com/applications/{{.app.metadata.name}}
    requiredContexts: []`)
		token(t, got)
		// An existing deployment of the revision is reused; there is none.
		next(t, got, "GET", "/api/v3/repos/example/shop/deployments?environment=production&ref=abc123")
		dep := next(t, got, "POST", "/api/v3/repos/example/shop/deployments")
		if dep["ref"] != "abc123" || dep["environment"] != "production" || dep["auto_merge"] != true || dep["transient_environment"] != false {
			t.Errorf("deployment %v", dep)
		}
		st := next(t, got, "POST", "/api/v3/repos/example/shop/deployments/42/statuses")
		if st["state"] != "failure" || st["environment"] != "production" || st["environment_url"] != "https://shop.example.com" ||
			st["log_url"] != "https://cd.example.com/applications/shop" || st["description"] != "Sync of shop failed" {
			t.Errorf("deployment status %v", st)
		}
	})
	t.Run("pull request comment", func(t *testing.T) {
		srv, got := githubAPI(t, "")
		sendGitHub(t, srv.URL, head+`  pullRequestComment:
    content: "{{.app.metadata.name}} failed to sync {{.app.status.sync.revision}}"`)
		token(t, got)
		next(t, got, "GET", "/api/v3/repos/example/shop/commits/abc123/pulls?per_page=20")
		c := next(t, got, "POST", "/api/v3/repos/example/shop/issues/7/comments")
		if c["body"] != "shop failed to sync abc123" {
			t.Errorf("comment %v", c)
		}
	})
	t.Run("pull request comment with a tag edits its comment", func(t *testing.T) {
		// commentTag marks the comment, so a later notification edits it
		// instead of adding another.
		srv, got := githubAPI(t, "old text\n<!-- argocd-notifications shop -->")
		sendGitHub(t, srv.URL, head+`  pullRequestComment:
    content: "{{.app.metadata.name}} failed"
    commentTag: shop`)
		token(t, got)
		next(t, got, "GET", "/api/v3/repos/example/shop/commits/abc123/pulls?per_page=20")
		next(t, got, "GET", "/api/v3/repos/example/shop/issues/7/comments?per_page=100")
		c := next(t, got, "PATCH", "/api/v3/repos/example/shop/issues/comments/99")
		if body, _ := c["body"].(string); !strings.HasPrefix(body, "shop failed") || !strings.Contains(body, "shop -->") {
			t.Errorf("edited comment %v", c)
		}
	})
}

type panicking struct{}

func (panicking) Send(services.Notification, services.Destination) error { panic("index out of range") }

// A service's panic reaches the caller as an error naming the service.
func TestSenderRecovers(t *testing.T) {
	err := recovering{panicking{}, "github"}.Send(services.Notification{}, services.Destination{})
	if err == nil || err.Error() != "the github service failed unexpectedly" {
		t.Errorf("send: %v", err)
	}
}
