package chatops

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseIdentities(t *testing.T) {
	const file = `users:
- slack: U1
  team: T1
  user: alice
  groups: [release, ops]
- slack: U1
  team: T2
  user: bob
- {slack: W3, team: T1, user: carol@example.com, groups: ["Release Managers"]}
`
	ids, err := ParseIdentities([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		team, user string
		want       Identity
		wantOK     bool
	}{
		{"T1", "U1", Identity{User: "alice", Groups: []string{"release", "ops"}}, true},
		{"T2", "U1", Identity{User: "bob"}, true},
		{"T1", "W3", Identity{User: "carol@example.com", Groups: []string{"Release Managers"}}, true},
		{"T3", "U1", Identity{}, false},
		{"T1", "U2", Identity{}, false},
		{"", "", Identity{}, false},
	}
	for _, tt := range tests {
		got, ok := ids.Lookup(tt.team, tt.user)
		if ok != tt.wantOK {
			t.Errorf("Lookup(%q, %q) found %t, want %t", tt.team, tt.user, ok, tt.wantOK)
		}
		if d := cmp.Diff(got, tt.want); d != "" {
			t.Errorf("Lookup(%q, %q) (-got +want):\n%s", tt.team, tt.user, d)
		}
	}
	if ids.Len() != 3 {
		t.Errorf("Len = %d, want 3", ids.Len())
	}
	var none *Identities
	if _, ok := none.Lookup("T1", "U1"); ok || none.Len() != 0 {
		t.Error("the nil Identities maps someone")
	}
}

func TestParseIdentitiesRefuses(t *testing.T) {
	for name, file := range map[string]string{
		"no team":           "users:\n- {slack: U1, user: alice}\n",
		"no slack user":     "users:\n- {team: T1, user: alice}\n",
		"no graphcd user":   "users:\n- {slack: U1, team: T1, groups: [release]}\n",
		"listed twice":      "users:\n- {slack: U1, team: T1, user: alice}\n- {slack: U1, team: T1, user: bob}\n",
		"unknown field":     "users:\n- {slack: U1, team: T1, user: alice, group: release}\n",
		"unknown top field": "user:\n- {slack: U1, team: T1, user: alice}\n",
		"space in user":     "users:\n- {slack: U1, team: T1, user: 'alice smith'}\n",
		"empty group":       "users:\n- {slack: U1, team: T1, user: alice, groups: ['']}\n",
		"not YAML":          "users: [\n",
	} {
		if _, err := ParseIdentities([]byte(file)); err == nil {
			t.Errorf("%s: ParseIdentities accepted %q", name, file)
		}
	}
}

// Who may send which command, decided before graphcd is asked (the server
// here answers nothing, so a command that gets through "could not reach"
// it).
func TestCommandIdentity(t *testing.T) {
	const secret = "signing-secret"
	now := time.Unix(1_800_000_000, 0)
	ids, err := ParseIdentities([]byte("users:\n- {slack: U1, team: T1, user: alice, groups: [release]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	server := &url.URL{Scheme: "http", Host: "127.0.0.1:1"}
	mapped := newBot(Config{Server: server, SigningSecret: secret, Identities: ids}, slog.New(slog.DiscardHandler))
	unmapped := newBot(Config{Server: server, SigningSecret: secret}, slog.New(slog.DiscardHandler))
	const refused = `{"response_type":"ephemeral","text":"` + notMapped + `"}`
	tests := []struct {
		name       string
		bot        *bot
		command    string
		team, user string
		want       string
	}{
		{"mapped user syncs", mapped, "/sync", "T1", "U1",
			`{"response_type":"ephemeral","text":"sync of shop failed: graphcd could not be reached"}`},
		{"mapped user approves", mapped, "/approve", "T1", "U1",
			`{"response_type":"ephemeral","text":"approval of the sync of shop failed: graphcd could not be reached"}`},
		{"unmapped user may not sync", mapped, "/sync", "T1", "U2", refused},
		{"unmapped user may not approve", mapped, "/approve", "T1", "U2", refused},
		{"same user in another team", mapped, "/approve", "T2", "U1", refused},
		{"no user", mapped, "/approve", "", "", refused},
		{"without an identity file anyone syncs", unmapped, "/sync", "T9", "U9",
			`{"response_type":"ephemeral","text":"sync of shop failed: graphcd could not be reached"}`},
		{"without an identity file no one approves", unmapped, "/approve", "T1", "U1", refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.bot.now = func() time.Time { return now }
			form := url.Values{"command": {tt.command}, "text": {"shop"}, "team_id": {tt.team}, "user_id": {tt.user}}
			w := httptest.NewRecorder()
			tt.bot.routes().ServeHTTP(w, signedRequest(t, secret, now, form))
			if body := strings.TrimSpace(w.Body.String()); w.Code != http.StatusOK || body != tt.want {
				t.Errorf("got %d %s, want 200 %s", w.Code, body, tt.want)
			}
		})
	}
}

func TestHealthz(t *testing.T) {
	b := newBot(Config{Server: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}, SigningSecret: "s"}, slog.New(slog.DiscardHandler))
	w := httptest.NewRecorder()
	b.routes().ServeHTTP(w, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/healthz", nil))
	if w.Code != http.StatusOK || w.Body.String() != "ok\n" {
		t.Errorf("/healthz = %d %q, want 200 ok", w.Code, w.Body)
	}
}

// /approve sends the mapped identity as onBehalfOf, with the bot's token,
// and tells the channel what the sync still waits for. (graphcd's side of
// this is TestBotAgainstGraphcd.)
func TestApproveOnBehalf(t *testing.T) {
	const secret = "signing-secret"
	now := time.Unix(1_800_000_000, 0)
	var got struct {
		Query     string
		Variables struct {
			App map[string]string
			By  struct {
				User   string
				Groups []string
			}
		}
	}
	graphcd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/graphql" || r.Header.Get("Authorization") != "Bearer bot-token" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, `{"data":{"approveSync":{"name":"shop","namespace":"graphcd",`+
			`"syncApproval":{"operation":{"approvalsNeeded":2,"approvals":[{"user":"alice"}]}}}}}`)
	}))
	defer graphcd.Close()
	server, _ := url.Parse(graphcd.URL)
	for _, tc := range []struct {
		file       string
		wantGroups []string
	}{
		{"users:\n- {slack: U1, team: T1, user: alice, groups: [release, ops]}\n", []string{"release", "ops"}},
		{"users:\n- {slack: U1, team: T1, user: alice}\n", []string{}},
	} {
		ids, err := ParseIdentities([]byte(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		b := newBot(Config{Server: server, Token: "bot-token", SigningSecret: secret, Identities: ids}, slog.New(slog.DiscardHandler))
		b.now = func() time.Time { return now }
		w := httptest.NewRecorder()
		form := url.Values{"command": {"/approve"}, "text": {"shop graphcd"}, "team_id": {"T1"}, "user_id": {"U1"}}
		b.routes().ServeHTTP(w, signedRequest(t, secret, now, form))
		want := `{"response_type":"in_channel","text":"sync of shop approved by alice; it waits for 1 more approval"}`
		if body := strings.TrimSpace(w.Body.String()); body != want {
			t.Errorf("answer %s, want %s", body, want)
		}
		if got.Query != approveMutation || got.Variables.By.User != "alice" || !slices.Equal(got.Variables.By.Groups, tc.wantGroups) ||
			got.Variables.By.Groups == nil || got.Variables.App["name"] != "shop" || got.Variables.App["namespace"] != "graphcd" {
			t.Errorf("graphcd was asked %+v, want approveSync of graphcd/shop on behalf of alice with groups %q", got, tc.wantGroups)
		}
	}
}
