package chatops

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A start is followed until graphcd reports the sync held (the hold comes
// a pass after the start), and only once when the application's syncs
// need no approval. graphcd's side is TestBotAgainstGraphcd; this covers
// the asking again.
func TestFollowHold(t *testing.T) {
	const (
		noPolicy = `{"data":{"application":{"syncApproval":{"policy":null,"held":false,"operation":null}}}}`
		notYet   = `{"data":{"application":{"syncApproval":{"policy":{"approvals":1},"held":false,"operation":null}}}}`
		held     = `{"data":{"application":{"syncApproval":{"policy":{"approvals":1},"held":true,"operation":` +
			`{"id":"op","initiatedBy":"carol","approvalsNeeded":1,"groups":["release"],"expiresAt":"2026-12-07T06:00:00Z"}}}}}`
	)
	for _, tc := range []struct {
		name      string
		answers   []string
		wantAsked int
		want      []string
	}{
		{"no policy", []string{noPolicy}, 1, nil},
		{"held on the second look", []string{notYet, held}, 2, []string{
			":hourglass_flowing_sand: The sync of *shop* (graphcd) requested by carol waits for 1 approval from *release* until 2026-12-07 06:00 UTC. To approve: `/approve shop graphcd`",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			graphcd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(asked.Add(1))
				_, _ = io.WriteString(w, tc.answers[min(n, len(tc.answers))-1])
			}))
			defer graphcd.Close()
			chat := &recorder{}
			webhook := httptest.NewServer(chat)
			defer webhook.Close()
			server, _ := url.Parse(graphcd.URL)
			b := newBot(Config{Server: server, Token: "t", WebhookURL: webhook.URL}, slog.New(slog.DiscardHandler))

			b.relay(t.Context(), event{Type: "OperationPhaseChanged", Name: "shop", Namespace: "graphcd", OperationPhase: "Running"})
			b.following.Wait()
			if n := int(asked.Load()); n != tc.wantAsked {
				t.Errorf("graphcd was asked %d times, want %d", n, tc.wantAsked)
			}
			if d := cmp.Diff(chat.texts(), tc.want); d != "" {
				t.Errorf("chat messages (-got +want):\n%s", d)
			}
		})
	}
}
