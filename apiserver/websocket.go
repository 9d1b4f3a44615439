package apiserver

import (
	"cmp"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// DefaultWebsocketWriteTimeout bounds one frame write, so a client that
// stops reading cannot hold a server goroutine forever: past it the socket
// is closed (see gorillaConn.WriteJSON).
const DefaultWebsocketWriteTimeout = 10 * time.Second

// DefaultWebsocketPingInterval is how often graphql-transport-ws clients
// are pinged. Their libraries answer pings on their own; a peer that has
// gone without closing (a laptop put to sleep, a dropped NAT entry) answers
// none and is disconnected after at most three intervals, instead of
// holding its subscriptions for ever.
const DefaultWebsocketPingInterval = 30 * time.Second

// websocketReadBuffer is the size of a socket's own read buffer. Client
// messages are small (subscribe, complete, ping); larger ones are read
// through it in pieces. A buffer of its own, rather than gorilla reusing
// net/http's 4 KB reader, lets net/http's per-connection state go once the
// handshake is done (see serveSockets).
const websocketReadBuffer = 1 << 10

// websocketWriteBuffers lends sockets a write buffer only while they write
// a frame, so an idle subscriber holds none: about 5 KB less per socket
// than gorilla's default (see docs/benchmarks.md, "GraphQL subscriptions:
// 5,000 websocket subscribers").
var websocketWriteBuffers = &sync.Pool{}

// serveSockets serves gql, running each websocket on a goroutine of its own
// and returning from the HTTP handler as soon as the handshake is done.
// gqlgen's transport otherwise keeps the HTTP handler running as the
// socket's read loop, and with it net/http's buffers for the connection
// (~10 KB) and the handler chain's deep stack, for as long as the socket
// lives. A socket's context keeps the request's values but not its
// cancellation (net/http cancels it when the handler returns); it ends
// when the socket does or when lifetime does (server shutdown).
func serveSockets(gql http.Handler, lifetime context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// gqlgen picks its websocket transport by this same test.
		if r.Header.Get("Upgrade") == "" {
			gql.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
		stop := context.AfterFunc(lifetime, cancel)
		h := &handshake{w: w, done: make(chan struct{})}
		go func() {
			defer func() {
				stop()
				cancel()
				h.finish()
			}()
			gql.ServeHTTP(h, r.WithContext(ctx))
		}()
		<-h.done
	})
}

// handshake is the ResponseWriter gqlgen's transport gets from
// serveSockets. Accept upgrades the connection on the writer it wraps and
// then calls upgraded, which lets the HTTP handler return and drops the
// writer: gqlgen keeps its ResponseWriter for as long as the socket lives,
// and net/http's writer holds the connection's buffers. A refused
// handshake is answered through it before the handler returns.
type handshake struct {
	w    http.ResponseWriter // nil once upgraded
	once sync.Once
	done chan struct{}
}

func (h *handshake) upgraded() {
	h.w = nil
	h.finish()
}

func (h *handshake) finish() { h.once.Do(func() { close(h.done) }) }

func (h *handshake) Header() http.Header {
	if h.w == nil {
		return http.Header{}
	}
	return h.w.Header()
}

func (h *handshake) Write(b []byte) (int, error) {
	if h.w == nil {
		return 0, http.ErrHijacked
	}
	return h.w.Write(b)
}

func (h *handshake) WriteHeader(code int) {
	if h.w != nil {
		h.w.WriteHeader(code)
	}
}

// gorillaWebsocket plugs gorilla/websocket into gqlgen's websocket
// transport. It accepts a handshake only from the server's own origin, an
// allowed origin, or a client that sends no Origin (scripts and bots;
// browsers always send one, so cross-site pages cannot ride a user's
// session).
type gorillaWebsocket struct {
	// allowed are extra origins, as scheme://host[:port], compared
	// case-insensitively.
	allowed map[string]bool
	// writeTimeout bounds one frame write.
	writeTimeout time.Duration
}

func newGorillaWebsocket(allowedOrigins []string, writeTimeout time.Duration) gorillaWebsocket {
	g := gorillaWebsocket{allowed: map[string]bool{}, writeTimeout: writeTimeout}
	for _, o := range allowedOrigins {
		g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

var _ transport.WebsocketImplementation = gorillaWebsocket{}

// Accept upgrades r after checking its Origin; a refused handshake is
// answered with 403 by gorilla.
func (g gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	hs, detached := w.(*handshake)
	if detached {
		w = hs.w
	}
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     opts.Subprotocols,
		CheckOrigin:      g.checkOrigin,
		ReadBufferSize:   websocketReadBuffer,
		WriteBufferPool:  websocketWriteBuffers,
		// Many small JSON frames: compression would cost more CPU than
		// it saves on loopback and LANs.
		EnableCompression: false,
	}
	conn, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	if detached {
		hs.upgraded()
		// gqlgen keeps the request's headers for as long as the socket
		// lives and reads none after the handshake; r is serveSockets'
		// copy of the request, so the caller's is left whole.
		r.Header = nil
	}
	return &gorillaConn{conn: conn, writeTimeout: g.writeTimeout}, nil
}

// checkOrigin allows a missing Origin, the request's own host, and the
// configured origins; nothing else.
func (g gorillaWebsocket) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return g.allowed[strings.ToLower(u.Scheme+"://"+u.Host)]
}

// gorillaConn adapts a gorilla connection to gqlgen's WebsocketConn.
// gqlgen serialises its own writes; the mutex also covers WriteClose.
type gorillaConn struct {
	conn         *websocket.Conn
	mu           sync.Mutex
	writeTimeout time.Duration
}

var (
	_ transport.WebsocketConn          = (*gorillaConn)(nil)
	_ transport.WebsocketReadLimiter   = (*gorillaConn)(nil)
	_ transport.WebsocketReadDeadliner = (*gorillaConn)(nil)
)

func (c *gorillaConn) NextReader() (int, io.Reader, error) {
	typ, r, err := c.conn.NextReader()
	if websocket.IsCloseError(err, websocket.CloseNormalClosure, websocket.CloseNoStatusReceived, websocket.CloseGoingAway) {
		return typ, nil, transport.ErrWebsocketClosed
	}
	if errors.Is(err, websocket.ErrReadLimit) {
		// gorilla has already answered with close code 1009.
		return typ, nil, transport.ErrWebsocketClosed
	}
	return typ, r, err
}

// WriteJSON writes one message. gqlgen's messages carry their payload as
// JSON it has just marshalled; WriteJSON writes that as it is instead of
// letting encoding/json validate and compact it a second time for every
// delivery. A message of any other shape goes through encoding/json.
//
// A write that fails (past the write timeout, for a client that stopped
// reading) leaves gorilla's connection unable to write again, and gqlgen
// only reports the error: the connection is closed here, so the read loop
// ends, the subscriptions stop and the client sees the socket go instead
// of a silence.
func (c *gorillaConn) WriteJSON(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.writeJSON(v)
	if err != nil {
		_ = c.conn.Close()
	}
	return err
}

func (c *gorillaConn) writeJSON(v any) error {
	_ = c.conn.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	layout := frameLayoutOf(reflect.TypeOf(v))
	if layout == nil {
		return c.conn.WriteJSON(v)
	}
	w, err := c.conn.NextWriter(websocket.TextMessage)
	if err != nil {
		return err
	}
	err = layout.write(w, reflect.ValueOf(v).Elem())
	return cmp.Or(err, w.Close())
}

// frameLayout is where a gqlgen websocket message type keeps the fields
// encoding/json would write: a pointer to a struct whose only exported
// fields are
//
//	Payload json.RawMessage `json:"payload,omitempty"`
//	ID      string          `json:"id,omitempty"`
//	Type    <TextMarshaler> `json:"type"`
//
// in this order (graphql-transport-ws and graphql-ws messages both are).
type frameLayout struct{ payload, id, typ int }

// frameLayouts caches frameLayoutOf by type; a nil *frameLayout marks a
// type of another shape.
var frameLayouts sync.Map

func frameLayoutOf(t reflect.Type) *frameLayout {
	if cached, ok := frameLayouts.Load(t); ok {
		return cached.(*frameLayout)
	}
	l := findFrameLayout(t)
	frameLayouts.Store(t, l)
	return l
}

func findFrameLayout(t reflect.Type) *frameLayout {
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	st := t.Elem()
	want := []struct {
		name, tag string
		ok        func(reflect.Type) bool
	}{
		{"Payload", "payload,omitempty", func(t reflect.Type) bool { return t == reflect.TypeFor[json.RawMessage]() }},
		{"ID", "id,omitempty", func(t reflect.Type) bool { return t == reflect.TypeFor[string]() }},
		{"Type", "type", func(t reflect.Type) bool { return t.Implements(reflect.TypeFor[encoding.TextMarshaler]()) }},
	}
	var at []int
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		n := len(at)
		if n == len(want) || f.Name != want[n].name || f.Tag.Get("json") != want[n].tag || !want[n].ok(f.Type) {
			return nil
		}
		at = append(at, i)
	}
	if len(at) != len(want) {
		return nil
	}
	return &frameLayout{payload: at[0], id: at[1], typ: at[2]}
}

// write writes the message m as encoding/json would, but for the payload,
// which it copies unchecked: gqlgen marshalled it, or decoded it from a
// client's message, so it is one valid JSON value.
func (l *frameLayout) write(w io.Writer, m reflect.Value) error {
	typ, err := m.Field(l.typ).Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return err
	}
	b := make([]byte, 0, 64)
	sep := byte('{')
	if p := m.Field(l.payload).Bytes(); len(p) > 0 {
		b = append(b, `{"payload":`...)
		if _, err := w.Write(b); err != nil {
			return err
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
		b, sep = b[:0], ','
	}
	if id := m.Field(l.id).String(); id != "" {
		b = append(b, sep)
		b = append(b, `"id":`...)
		b = appendJSONString(b, id)
		sep = ','
	}
	b = append(b, sep)
	b = append(b, `"type":`...)
	b = appendJSONString(b, string(typ))
	b = append(b, '}')
	_, err = w.Write(b)
	return err
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (c *gorillaConn) WriteClose(code int, message string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	msg := websocket.FormatCloseMessage(code, message)
	return c.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
}

func (c *gorillaConn) Close() error { return c.conn.Close() }

func (c *gorillaConn) Subprotocol() string { return c.conn.Subprotocol() }

func (c *gorillaConn) SetReadLimit(limit int64) { c.conn.SetReadLimit(limit) }

func (c *gorillaConn) SetReadDeadline(t time.Time) error { return c.conn.SetReadDeadline(t) }
