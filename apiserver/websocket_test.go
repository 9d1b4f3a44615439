package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
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

// frameMessage has the shape of gqlgen's websocket messages (which also
// have an unexported field, left out here as unused).
type frameMessage struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	ID      string          `json:"id,omitempty"`
	Type    frameType       `json:"type"`
}

type frameType string

func (t frameType) MarshalText() ([]byte, error) { return []byte(t), nil }

// TestFrameLayout checks that messages of gqlgen's shape are written as
// encoding/json writes them, and that other shapes are left to it.
func TestFrameLayout(t *testing.T) {
	layout := frameLayoutOf(reflect.TypeFor[*frameMessage]())
	if layout == nil {
		t.Fatal("no layout for a message of gqlgen's shape")
	}
	for _, m := range []frameMessage{
		{Type: "connection_ack"},
		{Type: "pong", Payload: json.RawMessage(`{}`)},
		{ID: "1", Type: "next", Payload: json.RawMessage(`{"data":{"a":"\u003cb\u003e"}}`)},
		{ID: "1", Type: "complete"},
		{ID: `a "quoted" <id> & é`, Type: "next", Payload: json.RawMessage(`[1,2]`)},
		{ID: "x\n", Type: "error", Payload: json.RawMessage(`null`)},
	} {
		var got bytes.Buffer
		if err := layout.write(&got, reflect.ValueOf(&m).Elem()); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if got.String() != string(want) {
			t.Errorf("wrote %s, want %s", got.String(), want)
		}
	}

	type wrongTag struct {
		Payload json.RawMessage `json:"data,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    frameType       `json:"type"`
	}
	type extraField struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    frameType       `json:"type"`
		More    int
	}
	type plainType struct {
		Payload json.RawMessage `json:"payload,omitempty"`
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[frameMessage](), reflect.TypeFor[*wrongTag](), reflect.TypeFor[*extraField](),
		reflect.TypeFor[*plainType](), reflect.TypeFor[map[string]any](), nil,
	} {
		if frameLayoutOf(typ) != nil {
			t.Errorf("%v: got a layout, want encoding/json", typ)
		}
	}
}

// TestFrameLayoutFitsGQLGen checks that gqlgen's own messages take the
// fast path: a change of their shape in a gqlgen release would otherwise
// only show as a slower server.
func TestFrameLayoutFitsGQLGen(t *testing.T) {
	ts, _ := newTestServer(t, Options{})
	for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
		d := websocket.Dialer{Subprotocols: []string{proto}}
		conn, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/api/graphql", nil)
		if err != nil {
			t.Fatalf("%s: dial: %v", proto, err)
		}
		_ = resp.Body.Close()
		if err := conn.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
			t.Fatal(err)
		}
		var ack map[string]any
		if err := conn.ReadJSON(&ack); err != nil || ack["type"] != "connection_ack" {
			t.Fatalf("%s: after connection_init: %v, %v", proto, ack, err)
		}
		_ = conn.Close()
	}
	seen := 0
	frameLayouts.Range(func(typ, layout any) bool {
		if typ == nil || typ.(reflect.Type).Kind() != reflect.Pointer ||
			typ.(reflect.Type).Elem().PkgPath() != "github.com/99designs/gqlgen/graphql/handler/transport" {
			return true // TestFrameLayout's
		}
		seen++
		if layout.(*frameLayout) == nil {
			t.Errorf("gqlgen message type %v does not fit frameLayout", typ)
		}
		return true
	})
	if seen < 2 {
		t.Errorf("saw %d message types, want those of both subprotocols", seen)
	}
}
