package chatops

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// signedRequest is a slash-command POST of form, signed with secret at ts
// as Slack signs it.
func signedRequest(t *testing.T, secret string, ts time.Time, form url.Values) *http.Request {
	t.Helper()
	body := form.Encode()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/slack/command", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	stamp := strconv.FormatInt(ts.Unix(), 10)
	req.Header.Set("X-Slack-Request-Timestamp", stamp)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(sign([]byte(secret), stamp, []byte(body))))
	return req
}

func TestVerifySignature(t *testing.T) {
	// The example from Slack's "Verifying requests from Slack" guide.
	const (
		secret = "8f742231b10e8888abcd99yyyzzz85a5"
		body   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
		stamp  = "1531420618"
		sig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	)
	at := time.Unix(1531420618, 0)
	tests := []struct {
		name      string
		stamp     string
		signature string
		body      string
		now       time.Time
		wantErr   bool
	}{
		{"valid", stamp, sig, body, at, false},
		{"valid within the window", stamp, sig, body, at.Add(4*time.Minute + 59*time.Second), false},
		{"too old", stamp, sig, body, at.Add(5*time.Minute + time.Second), true},
		{"from the future", stamp, sig, body, at.Add(-5*time.Minute - time.Second), true},
		{"body changed", stamp, sig, body + "&text=prod", at, true},
		{"timestamp changed", "1531420619", sig, body, at, true},
		{"wrong signature", stamp, "v0=" + strings.Repeat("0", 64), body, at, true},
		{"no version prefix", stamp, strings.TrimPrefix(sig, "v0="), body, at, true},
		{"not hex", stamp, "v0=zz", body, at, true},
		{"truncated", stamp, sig[:20], body, at, true},
		{"no signature", stamp, "", body, at, true},
		{"no timestamp", "", sig, body, at, true},
		{"timestamp not a number", "soon", sig, body, at, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			h.Set("X-Slack-Request-Timestamp", tt.stamp)
			h.Set("X-Slack-Signature", tt.signature)
			err := verifySignature([]byte(secret), h, []byte(tt.body), tt.now)
			if (err != nil) != tt.wantErr {
				t.Errorf("verifySignature = %v, want error %t", err, tt.wantErr)
			}
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name, command, text string
		want                command
		wantErr             bool
	}{
		{"app", "/sync", "guestbook", command{name: "/sync", app: "guestbook"}, false},
		{"app and namespace", "/sync", "  guestbook   team-a ", command{name: "/sync", app: "guestbook", namespace: "team-a"}, false},
		{"dotted app", "/sync", "web.v2", command{name: "/sync", app: "web.v2"}, false},
		{"approve", "/approve", "guestbook team-a", command{name: "/approve", app: "guestbook", namespace: "team-a"}, false},
		{"no app", "/sync", "  ", command{}, true},
		{"approve nothing", "/approve", "", command{}, true},
		{"too many words", "/sync", "a b c", command{}, true},
		{"other command", "/deploy", "guestbook", command{}, true},
		{"upper case", "/sync", "Guestbook", command{}, true},
		{"markup", "/approve", "<!channel>", command{}, true},
		{"bad namespace", "/sync", "guestbook team.a", command{}, true},
		{"too long", "/sync", strings.Repeat("a", 254), command{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCommand(tt.command, tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseCommand(%q, %q) error = %v, want error %t", tt.command, tt.text, err, tt.wantErr)
			}
			if d := cmp.Diff(got, tt.want, cmp.AllowUnexported(command{})); d != "" {
				t.Errorf("parseCommand(%q, %q) (-got +want):\n%s", tt.command, tt.text, d)
			}
		})
	}
}

func TestHeldText(t *testing.T) {
	expires := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	started := func(name, namespace string) event {
		return event{Type: "OperationPhaseChanged", Name: name, Namespace: namespace, OperationPhase: "Running"}
	}
	tests := []struct {
		name string
		e    event
		h    heldOperation
		want string
	}{
		{"requested", started("shop", "graphcd"), heldOperation{ID: "op-1", InitiatedBy: "carol", ApprovalsNeeded: 1, Groups: []string{"release"}, ExpiresAt: expires},
			":hourglass_flowing_sand: The sync of *shop* (graphcd) requested by carol waits for 1 approval from *release* until 2026-12-07 06:00 UTC. To approve: `/approve shop graphcd`"},
		{"automated, two approvals from two groups", started("shop", ""), heldOperation{ApprovalsNeeded: 2, Groups: []string{"release", "ops"}, ExpiresAt: expires},
			":hourglass_flowing_sand: An automated sync of *shop* waits for 2 approvals from *release* or *ops* until 2026-12-07 06:00 UTC. To approve: `/approve shop`"},
		{"anyone may approve", started("shop", "graphcd"), heldOperation{InitiatedBy: "carol", ApprovalsNeeded: 1, ExpiresAt: expires.Add(90 * time.Minute)},
			":hourglass_flowing_sand: The sync of *shop* (graphcd) requested by carol waits for 1 approval from anyone allowed to approve it until 2026-12-07 07:30 UTC. To approve: `/approve shop graphcd`"},
		{"markup escaped", started("shop", "graphcd"), heldOperation{InitiatedBy: "<!channel>", ApprovalsNeeded: 1, Groups: []string{"a&b"}, ExpiresAt: expires},
			":hourglass_flowing_sand: The sync of *shop* (graphcd) requested by &lt;!channel&gt; waits for 1 approval from *a&amp;b* until 2026-12-07 06:00 UTC. To approve: `/approve shop graphcd`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.e.started() {
				t.Errorf("%+v does not count as started", tt.e)
			}
			if got := heldText(tt.e, &tt.h); got != tt.want {
				t.Errorf("heldText = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAlertText(t *testing.T) {
	tests := []struct {
		name string
		e    event
		want string // "" for no message
	}{
		{"sync failed", event{Type: "OperationPhaseChanged", Name: "shop", Namespace: "graphcd", OperationPhase: "Failed", Message: "one or more objects failed to apply"},
			":x: Sync of *shop* (graphcd) ended Failed: one or more objects failed to apply"},
		{"sync error without message", event{Type: "OperationPhaseChanged", Name: "shop", OperationPhase: "Error"},
			":x: Sync of *shop* ended Error"},
		{"sync running", event{Type: "OperationPhaseChanged", Name: "shop", OperationPhase: "Running"}, ""},
		{"sync succeeded", event{Type: "OperationPhaseChanged", Name: "shop", OperationPhase: "Succeeded"}, ""},
		{"degraded", event{Type: "HealthChanged", Name: "shop", Namespace: "graphcd", Health: "Degraded"}, ":warning: *shop* (graphcd) is Degraded"},
		{"missing", event{Type: "HealthChanged", Name: "shop", Health: "Missing"}, ":warning: *shop* is Missing"},
		{"healthy", event{Type: "HealthChanged", Name: "shop", Health: "Healthy"}, ""},
		{"progressing", event{Type: "HealthChanged", Name: "shop", Health: "Progressing"}, ""},
		{"health field on another type", event{Type: "SyncStatusChanged", Name: "shop", Health: "Degraded"}, ""},
		{"lagged", event{Lagged: true}, ":warning: Some graphcd application events were missed because the bot fell behind; check the applications in graphcd."},
		{"markup escaped", event{Type: "OperationPhaseChanged", Name: "shop", OperationPhase: "Failed", Message: `<!channel> & <https://evil|click>`},
			":x: Sync of *shop* ended Failed: &lt;!channel&gt; &amp; &lt;https://evil|click&gt;"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := alertText(tt.e)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("alertText = %q, %t; want %q", got, ok, tt.want)
			}
		})
	}
}

// The command endpoint refuses what is not a correctly signed form post
// before it reaches graphcd (the server here answers nothing).
func TestCommandRefusals(t *testing.T) {
	const secret = "signing-secret"
	now := time.Unix(1_800_000_000, 0)
	b := newBot(Config{Server: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}, SigningSecret: secret}, slog.New(slog.DiscardHandler))
	b.now = func() time.Time { return now }
	h := b.routes()
	good := url.Values{"command": {"/sync"}, "text": {"shop"}}

	tests := []struct {
		name     string
		req      func() *http.Request
		wantCode int
		wantBody string
	}{
		{"GET", func() *http.Request {
			return httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/slack/command", nil)
		}, http.StatusMethodNotAllowed, "method not allowed"},
		{"JSON", func() *http.Request {
			r := signedRequest(t, secret, now, good)
			r.Header.Set("Content-Type", "application/json")
			return r
		}, http.StatusUnsupportedMediaType, "want a form post"},
		{"wrong secret", func() *http.Request { return signedRequest(t, "another", now, good) }, http.StatusUnauthorized, "invalid signature"},
		{"replayed", func() *http.Request { return signedRequest(t, secret, now.Add(-6*time.Minute), good) }, http.StatusUnauthorized, "invalid signature"},
		{"unsigned", func() *http.Request {
			r := signedRequest(t, secret, now, good)
			r.Header.Del("X-Slack-Signature")
			return r
		}, http.StatusUnauthorized, "invalid signature"},
		{"too large", func() *http.Request {
			return signedRequest(t, secret, now, url.Values{"command": {"/sync"}, "text": {strings.Repeat("a", maxCommandBody)}})
		}, http.StatusRequestEntityTooLarge, "request too large"},
		{"bad form", func() *http.Request {
			r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/slack/command", strings.NewReader("%zz"))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			stamp := strconv.FormatInt(now.Unix(), 10)
			r.Header.Set("X-Slack-Request-Timestamp", stamp)
			r.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(sign([]byte(secret), stamp, []byte("%zz"))))
			return r
		}, http.StatusBadRequest, "bad form"},
		{"no app", func() *http.Request {
			return signedRequest(t, secret, now, url.Values{"command": {"/sync"}})
		}, http.StatusOK, `{"response_type":"ephemeral","text":"usage: /sync APP [NAMESPACE]"}`},
		{"graphcd unreachable", func() *http.Request { return signedRequest(t, secret, now, good) },
			http.StatusOK, `{"response_type":"ephemeral","text":"sync of shop failed: graphcd could not be reached"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req())
			if body := strings.TrimSpace(w.Body.String()); w.Code != tt.wantCode || body != tt.wantBody {
				t.Errorf("got %d %q, want %d %q", w.Code, body, tt.wantCode, tt.wantBody)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	files := map[string]string{
		"/run/token":  "tok-from-file\n",
		"/run/secret": " sec-from-file \n",
		"/run/ids":    "users:\n- {slack: U1, team: T1, user: alice, groups: [release]}\n",
		"/run/badids": "users:\n- {slack: U1, team: T1, name: alice}\n",
	}
	readFile := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	env := map[string]string{
		"GRAPHCD_TOKEN":        "tok-from-env",
		"CHAT_WEBHOOK_URL":     "https://hooks.example.com/services/T/B/secret-part",
		"SLACK_SIGNING_SECRET": "sec-from-env",
	}
	base := Options{Server: "https://graphcd.example.com/"}
	with := func(change func(o *Options)) Options {
		o := base
		if change != nil {
			change(&o)
		}
		return o
	}
	type result struct {
		Server, Token, Webhook, Listen, Secret string
		Mapped                                 int
	}
	tests := []struct {
		name    string
		opts    Options
		env     map[string]string
		want    result
		wantErr string
	}{
		{"secrets from the environment", base, nil,
			result{"https://graphcd.example.com", "tok-from-env", env["CHAT_WEBHOOK_URL"], ":8090", "sec-from-env", 0}, ""},
		{"files win", with(func(o *Options) { o.TokenFile, o.ConfigFile = "/run/token", "/run/ids" }),
			map[string]string{"SLACK_SIGNING_SECRET_FILE": "/run/secret", "LISTEN": "127.0.0.1:9000"},
			result{"https://graphcd.example.com", "tok-from-file", env["CHAT_WEBHOOK_URL"], "127.0.0.1:9000", "sec-from-file", 1}, ""},
		{"options win", with(func(o *Options) {
			o.Listen, o.SigningSecretFile, o.WebhookURL = ":1", "/run/secret", "http://chat.example.com/hook"
		}), map[string]string{"SLACK_SIGNING_SECRET_FILE": "/run/nope", "LISTEN": ":2"},
			result{"https://graphcd.example.com", "tok-from-env", "http://chat.example.com/hook", ":1", "sec-from-file", 0}, ""},
		{"no server", with(func(o *Options) { o.Server = "" }), nil, result{}, "must be an http or https URL"},
		{"server not a URL", with(func(o *Options) { o.Server = "graphcd:8080" }), nil, result{}, "must be an http or https URL"},
		{"no token", base, map[string]string{"GRAPHCD_TOKEN": ""}, result{}, "no token"},
		{"missing token file", with(func(o *Options) { o.TokenFile = "/run/nope" }), nil, result{}, "/run/nope"},
		{"no secret", base, map[string]string{"SLACK_SIGNING_SECRET": ""}, result{}, "no signing secret"},
		{"bad webhook", base, map[string]string{"CHAT_WEBHOOK_URL": "hooks.example.com/secret-part"}, result{}, "webhook URL"},
		{"missing identity file", with(func(o *Options) { o.ConfigFile = "/run/nope" }), nil, result{}, "/run/nope"},
		{"bad identity file", with(func(o *Options) { o.ConfigFile = "/run/badids" }), nil, result{}, "/run/badids"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if v, ok := tt.env[k]; ok {
					return v
				}
				return env[k]
			}
			cfg, err := Load(tt.opts, getenv, readFile)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want it to contain %q", err, tt.wantErr)
				}
				for _, secret := range []string{"secret-part", "tok-from", "sec-from"} {
					if strings.Contains(err.Error(), secret) {
						t.Errorf("the error %q shows a secret", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := result{cfg.Server.String(), cfg.Token, cfg.WebhookURL, cfg.Listen, cfg.SigningSecret, cfg.Identities.Len()}
			if d := cmp.Diff(got, tt.want); d != "" {
				t.Errorf("config (-got +want):\n%s", d)
			}
		})
	}
}

// A failed webhook post says why without the webhook's URL, which is a
// secret.
func TestPostHidesWebhookURL(t *testing.T) {
	b := newBot(Config{WebhookURL: "http://127.0.0.1:1/services/T/B/secret-part"}, slog.New(slog.DiscardHandler))
	err := b.post(t.Context(), "hello")
	if err == nil || strings.Contains(err.Error(), "secret-part") {
		t.Errorf("post to a closed port = %v, want an error without the URL", err)
	}

	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "no_service", http.StatusNotFound)
	}))
	defer chat.Close()
	b.webhookURL = chat.URL + "/services/T/B/secret-part"
	err = b.post(t.Context(), "hello")
	if err == nil || strings.Contains(err.Error(), "secret-part") || !strings.Contains(err.Error(), "404") {
		t.Errorf("post to a 404 = %v, want an error naming the status without the URL", err)
	}
}

// manual is the bot's documentation, whose commands the tests run.
const manual = "../../../../docs/chatops.md"

// readmeBlocks returns the manual's fenced code blocks of language lang.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	raw, err := os.ReadFile(manual)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur *strings.Builder
	for line := range strings.Lines(string(raw)) {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```"+lang:
			cur = &strings.Builder{}
		case cur != nil && trimmed == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
		}
	}
	return blocks
}

// The manual shows the bot's GraphQL operations; they are the ones it sends.
func TestReadmeShowsTheOperations(t *testing.T) {
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	var got []string
	for _, b := range readmeBlocks(t, "graphql") {
		got = append(got, squash(b))
	}
	want := []string{squash(eventsSubscription), squash(syncMutation), squash(approveMutation), squash(heldQuery)}
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("docs/chatops.md's graphql blocks (-got +want):\n%s", d)
	}
}

// Whatever a correctly signed body holds, the endpoint answers with a
// status it means and, for 200, a Slack reply; it never panics.
func FuzzCommand(f *testing.F) {
	for _, seed := range []string{
		"command=%2Fsync&text=shop",
		"command=/sync&text=shop%20team-a%20extra",
		"command=/sync&text=%3C%21channel%3E",
		"command=/sync&command=/deploy&text=",
		"%zz",
		"text=" + strings.Repeat("a", 300),
		"",
	} {
		f.Add(seed)
	}
	const secret = "signing-secret"
	now := time.Unix(1_800_000_000, 0)
	b := newBot(Config{Server: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}, SigningSecret: secret}, slog.New(slog.DiscardHandler))
	b.now = func() time.Time { return now }
	h := b.routes()
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/slack/command", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		stamp := strconv.FormatInt(now.Unix(), 10)
		req.Header.Set("X-Slack-Request-Timestamp", stamp)
		req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(sign([]byte(secret), stamp, []byte(body))))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK:
			var got struct {
				ResponseType string `json:"response_type"`
				Text         string `json:"text"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Text == "" || strings.ContainsAny(got.Text, "<>") {
				t.Errorf("reply %q: want a Slack reply with escaped text", w.Body)
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Errorf("status %d for a signed body %q", w.Code, body)
		}
	})
}
