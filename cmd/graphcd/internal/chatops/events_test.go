package chatops

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
)

// wsPeer is the server side of one graphql-transport-ws socket, scripted
// by a test; the script's error fails the test. (The bot against real
// graphcd is bot_integration_test.go; this covers what graphcd cannot be
// made to do on cue: lag, ping, refuse.)
func wsPeer(t *testing.T, script func(p peer) error) *url.URL {
	t.Helper()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		if r.URL.Path != "/api/graphql" {
			t.Errorf("the bot dialled %s, want /api/graphql", r.URL.Path)
		}
		up := websocket.Upgrader{Subprotocols: []string{"graphql-transport-ws"}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer func() { _ = conn.Close() }()
		if conn.Subprotocol() != "graphql-transport-ws" {
			t.Errorf("subprotocol %q, want graphql-transport-ws", conn.Subprotocol())
		}
		if err := script(peer{conn}); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	u, _ := url.Parse(srv.URL)
	return u
}

// peer is graphcd's end of the socket.
type peer struct{ conn *websocket.Conn }

// expect reads the next message, which must have type typ.
func (p peer) expect(typ string) (wsMessage, error) {
	var m wsMessage
	if err := p.conn.ReadJSON(&m); err != nil {
		return m, fmt.Errorf("read %s: %w", typ, err)
	}
	if m.Type != typ {
		return m, fmt.Errorf("got message %q, want %q", m.Type, typ)
	}
	return m, nil
}

func (p peer) send(typ, id string, payload json.RawMessage) error {
	return p.conn.WriteJSON(wsMessage{Type: typ, ID: id, Payload: payload})
}

func (p peer) next(id string, e map[string]any) error {
	payload, _ := json.Marshal(map[string]any{"data": map[string]any{"applicationEvents": e}})
	return p.send("next", id, payload)
}

func (p peer) close(code int, text string) error {
	return p.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
}

// start expects connection_init, acks it and expects the subscription.
func (p peer) start() (wsMessage, error) {
	if _, err := p.expect("connection_init"); err != nil {
		return wsMessage{}, err
	}
	if err := p.send("connection_ack", "", nil); err != nil {
		return wsMessage{}, err
	}
	return p.expect("subscribe")
}

func TestSubscribe(t *testing.T) {
	const token = "role-token"
	server := wsPeer(t, func(p peer) error {
		init, err := p.expect("connection_init")
		if err != nil {
			return err
		}
		var auth map[string]string
		if err := json.Unmarshal(init.Payload, &auth); err != nil || auth["authorization"] != "Bearer "+token {
			return fmt.Errorf("connection_init payload %s, want the bearer token", init.Payload)
		}
		if err := p.send("connection_ack", "", nil); err != nil {
			return err
		}
		sub, err := p.expect("subscribe")
		if err != nil {
			return err
		}
		var q struct{ Query string }
		if err := json.Unmarshal(sub.Payload, &q); err != nil || q.Query != eventsSubscription {
			return fmt.Errorf("subscribe payload %s, want the events subscription", sub.Payload)
		}
		if err := p.send("ping", "", nil); err != nil {
			return err
		}
		if _, err := p.expect("pong"); err != nil {
			return err
		}
		for _, e := range []map[string]any{
			{"lagged": true},
			{"lagged": false, "type": "HealthChanged", "name": "shop", "namespace": "graphcd", "health": "Healthy"},
			{"lagged": false, "type": "OperationPhaseChanged", "name": "shop", "namespace": "graphcd", "operationPhase": "Error", "message": "repository not found"},
		} {
			if err := p.next(sub.ID, e); err != nil {
				return err
			}
		}
		// graphcd closes the socket when the token expires or is revoked.
		return p.close(4401, "token expired")
	})
	chat := &recorder{}
	webhook := httptest.NewServer(chat)
	defer webhook.Close()
	b := newBot(Config{Server: server, Token: token, WebhookURL: webhook.URL}, slog.New(slog.DiscardHandler))

	connected := false
	err := b.subscribe(t.Context(), func() { connected = true })
	if err == nil || !strings.Contains(err.Error(), "4401") {
		t.Errorf("subscribe = %v, want the 4401 close explained", err)
	}
	if !connected {
		t.Error("connected was not called after connection_ack")
	}
	want := []string{
		":warning: Some graphcd application events were missed because the bot fell behind; check the applications in graphcd.",
		":x: Sync of *shop* (graphcd) ended Error: repository not found",
	}
	if d := cmp.Diff(chat.texts(), want); d != "" {
		t.Errorf("chat messages (-got +want):\n%s", d)
	}
}

// A subscription graphcd refuses (an error message, or a socket closed
// before connection_ack) ends subscribe with graphcd's reason, and
// connected is never called without an ack.
func TestSubscribeRefused(t *testing.T) {
	tests := []struct {
		name      string
		script    func(p peer) error
		connected bool
		wantErr   string
	}{
		{"bad token", func(p peer) error {
			if _, err := p.expect("connection_init"); err != nil {
				return err
			}
			return p.close(4401, "Unauthorized")
		}, false, "graphcd refused the token (close code 4401)"},
		{"subscription error", func(p peer) error {
			sub, err := p.start()
			if err != nil {
				return err
			}
			payload := json.RawMessage(`[{"message":"too many subscriptions","extensions":{"code":"BAD_USER_INPUT"}}]`)
			if err := p.send("error", sub.ID, payload); err != nil {
				return err
			}
			_, _, _ = p.conn.ReadMessage() // until the bot hangs up
			return nil
		}, true, "graphcd refused the subscription: too many subscriptions (BAD_USER_INPUT)"},
		{"complete", func(p peer) error {
			sub, err := p.start()
			if err != nil {
				return err
			}
			if err := p.send("complete", sub.ID, nil); err != nil {
				return err
			}
			_, _, _ = p.conn.ReadMessage()
			return nil
		}, true, "graphcd ended the subscription"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server := wsPeer(t, tt.script)
			b := newBot(Config{Server: server, Token: "t", WebhookURL: "http://127.0.0.1:1/"}, slog.New(slog.DiscardHandler))
			connected := false
			err := b.subscribe(t.Context(), func() { connected = true })
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("subscribe = %v, want %q", err, tt.wantErr)
			}
			if connected != tt.connected {
				t.Errorf("connected called: %t, want %t", connected, tt.connected)
			}
		})
	}
}

// recorder is an incoming webhook that keeps the texts posted to it.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var msg struct{ Text string }
	if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.got = append(r.got, msg.Text)
	r.mu.Unlock()
}

func (r *recorder) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// The bot pings a quiet socket, so that graphcd's answers keep it from
// looking dead (graphcd sends no keep-alive of its own over
// graphql-transport-ws).
func TestSubscribePings(t *testing.T) {
	server := wsPeer(t, func(p peer) error {
		if _, err := p.start(); err != nil {
			return err
		}
		for range 2 {
			if _, err := p.expect("ping"); err != nil {
				return err
			}
			if err := p.send("pong", "", nil); err != nil {
				return err
			}
		}
		return p.close(4401, "token expired")
	})
	b := newBot(Config{Server: server, Token: "t", WebhookURL: "http://127.0.0.1:1/"}, slog.New(slog.DiscardHandler))
	b.pingEvery = 10 * time.Millisecond
	if err := b.subscribe(t.Context(), func() {}); err == nil || !strings.Contains(err.Error(), "4401") {
		t.Errorf("subscribe = %v, want the socket closed after two pings", err)
	}
}
