package server

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// dialGraphQL opens the GraphQL websocket with origin (none when empty)
// and returns the connection or the handshake's HTTP status.
func dialGraphQL(t *testing.T, baseURL, origin string) (*websocket.Conn, int) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	conn, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(baseURL, "http")+"/api/graphql", h)
	status := 0
	if resp != nil {
		status = resp.StatusCode
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, status
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, status
}

func TestWebsocketOrigin(t *testing.T) {
	ts, _ := newTestServer(t, Options{AllowedOrigins: []string{"https://console.example.com/"}})
	host := strings.TrimPrefix(ts.URL, "http://")
	tests := []struct {
		origin string
		ok     bool
	}{
		{"", true}, // scripts and bots send none
		{"http://" + host, true},
		{"https://CONSOLE.example.com", true},
		{"https://evil.example.com", false},
		{"https://console.example.com.evil.example.com", false},
		{"null", false},
		{"http://" + host + ".evil.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.origin, func(t *testing.T) {
			conn, status := dialGraphQL(t, ts.URL, tt.origin)
			if got := conn != nil; got != tt.ok {
				t.Fatalf("handshake accepted = %v (HTTP %d), want %v", got, status, tt.ok)
			}
			if !tt.ok && status != http.StatusForbidden {
				t.Errorf("refused with HTTP %d, want 403", status)
			}
		})
	}
}

// TestWebsocketWithoutInit checks that a socket that never sends
// connection_init is closed by the server.
func TestWebsocketWithoutInit(t *testing.T) {
	t.Parallel()
	ts, _ := newTestServer(t, Options{})
	conn, status := dialGraphQL(t, ts.URL, "")
	if conn == nil {
		t.Fatalf("dial: HTTP %d", status)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute)) // a hang fails, not the timing
	_, _, err := conn.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || !strings.Contains(ce.Text, "initialisation timeout") {
		t.Fatalf("read = %v, want a close for the connection_init timeout", err)
	}
}

// TestWebsocketReadLimit checks that an oversized message closes the
// socket instead of being buffered.
func TestWebsocketReadLimit(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	conn, status := dialGraphQL(t, ts.URL, "")
	if conn == nil {
		t.Fatalf("dial: HTTP %d", status)
	}
	if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
		t.Fatal(err)
	}
	big := `{"id":"1","type":"subscribe","payload":{"query":"` + strings.Repeat("x", 2*websocketReadLimit) + `"}}`
	_ = conn.WriteMessage(websocket.TextMessage, []byte(big))
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		_, _, err := conn.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseMessageTooBig) && !websocket.IsUnexpectedCloseError(err) {
				t.Fatalf("read = %v, want the socket closed", err)
			}
			return
		}
	}
}
