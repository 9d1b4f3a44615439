package terminal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/client-go/tools/remotecommand"
)

// socketPair returns the server side of a real websocket and its client.
func socketPair(t *testing.T) (*socket, *websocket.Conn) {
	t.Helper()
	got := make(chan *websocket.Conn, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		got <- c
	}))
	t.Cleanup(srv.Close)
	client, resp, err := websocket.DefaultDialer.DialContext(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	conn := <-got
	t.Cleanup(func() { _ = conn.Close() })
	return &socket{conn: conn, writeTimeout: time.Second}, client
}

// Output cut inside a UTF-8 character reaches the client whole: each
// stdout message holds whole characters only.
func TestStdoutKeepsCharactersWhole(t *testing.T) {
	sock, client := socketPair(t)
	first := 0
	out := &stdout{sock: sock, onFirst: func() { first++ }}
	text := "añ€😀b"
	b := []byte(text)
	for i := range b { // one byte a write: every character is cut
		if n, err := out.Write(b[i : i+1]); n != 1 || err != nil {
			t.Fatalf("write: %d %v", n, err)
		}
	}
	out.flush()
	var got strings.Builder
	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	for got.Len() < len(text) {
		var m message
		if err := client.ReadJSON(&m); err != nil {
			t.Fatalf("read: %v (got %q)", err, got.String())
		}
		if m.Operation != "stdout" || strings.ContainsRune(m.Data, '\uFFFD') {
			t.Fatalf("message %+v", m)
		}
		got.WriteString(m.Data)
	}
	if got.String() != text || first != 1 {
		t.Errorf("client read %q (first-output calls %d), want %q once", got.String(), first, text)
	}
}

// A size sent while one shell failed to start reaches the next: each
// attempt sees the latest size.
func TestSizeQueueViews(t *testing.T) {
	q := newSizeQueue()
	done1 := make(chan struct{})
	v1 := q.view(done1)
	q.push(sizeOf(24, 80))
	if s := v1.Next(); s == nil || s.Height != 24 || s.Width != 80 {
		t.Fatalf("first view: %+v", s)
	}
	close(done1)
	if s := v1.Next(); s != nil {
		t.Errorf("an ended view gave %+v", s)
	}
	v2 := q.view(make(chan struct{}))
	if s := v2.Next(); s == nil || s.Height != 24 {
		t.Fatalf("the next attempt's view: %+v, want the latest size", s)
	}
	q.push(sizeOf(40, 120))
	if s := v2.Next(); s == nil || s.Width != 120 {
		t.Errorf("after a resize: %+v", s)
	}
	q.stop()
	if s := v2.Next(); s != nil {
		t.Errorf("a stopped queue gave %+v", s)
	}
}

func sizeOf(rows, cols uint16) remotecommand.TerminalSize {
	return remotecommand.TerminalSize{Height: rows, Width: cols}
}
