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

// The GitHub service, as a GitHub App: it trades a JWT signed with the
// app's key for an installation token, then sets the commit status of the
// synced revision with it (POST /repos/{owner}/{repo}/statuses/{sha}).
func TestGitHubCommitStatus(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	got := make(chan received, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- received{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), b}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/access_tokens") {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"token": "ghs_installation", "expires_at": "2099-01-01T00:00:00Z"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"state": "failure"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := Parse(map[string]string{
		"service.github": "appID: 12345\ninstallationID: 7\nenterpriseBaseURL: " + srv.URL + "/api/v3\nprivateKey: $github-key\n",
		"template.t": `message: "Sync of {{.app.metadata.name}} failed"
github:
  repoURLPath: "{{.app.spec.source.repoURL}}"
  revisionPath: "{{.app.status.sync.revision}}"
  status:
    state: failure
    label: continuous-delivery/{{.app.metadata.name}}
    targetURL: https://cd.example.com/applications/{{.app.metadata.name}}`,
	}, map[string][]byte{"github-key": pemKey})
	if err != nil {
		t.Fatal(err)
	}
	dest := services.Destination{Service: "github"}
	n, err := c.Render(app(t, failedApp), dest, "t")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Sender("github")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(*n, dest); err != nil {
		t.Fatal(c.Redact(err.Error()))
	}
	token, status := <-got, <-got
	if token.method != "POST" || token.path != "/api/v3/app/installations/7/access_tokens" || !strings.HasPrefix(token.auth, "Bearer ey") {
		t.Errorf("token request %s %s auth %.12q", token.method, token.path, token.auth)
	}
	var body map[string]any
	_ = json.Unmarshal(status.body, &body)
	if status.method != "POST" || status.path != "/api/v3/repos/example/shop/statuses/abc123" || status.auth != "token ghs_installation" ||
		body["state"] != "failure" || body["context"] != "continuous-delivery/shop" || body["description"] != "Sync of shop failed" ||
		body["target_url"] != "https://cd.example.com/applications/shop" {
		t.Errorf("status request %s %s auth %q body %s", status.method, status.path, status.auth, status.body)
	}
}
