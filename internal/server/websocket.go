package server

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
)

// websocketWriteTimeout bounds one frame write, so a client that stops
// reading cannot hold a server goroutine forever.
const websocketWriteTimeout = 10 * time.Second

// websocketWriteBuffers lends sockets a write buffer only while they write
// a frame, so an idle subscriber holds none: about 5 KB less per socket
// than gorilla's default (see docs/benchmarks.md, "GraphQL subscriptions:
// 5,000 websocket subscribers"). A smaller read buffer would save nothing:
// net/http keeps the hijacked connection's reader while the handler runs.
var websocketWriteBuffers = &sync.Pool{}

// gorillaWebsocket plugs gorilla/websocket into gqlgen's websocket
// transport. It accepts a handshake only from the server's own origin, an
// allowed origin, or a client that sends no Origin (scripts and bots;
// browsers always send one, so cross-site pages cannot ride a user's
// session).
type gorillaWebsocket struct {
	// allowed are extra origins, as scheme://host[:port], compared
	// case-insensitively.
	allowed map[string]bool
}

func newGorillaWebsocket(allowedOrigins []string) gorillaWebsocket {
	g := gorillaWebsocket{allowed: map[string]bool{}}
	for _, o := range allowedOrigins {
		g.allowed[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

var _ transport.WebsocketImplementation = gorillaWebsocket{}

// Accept upgrades r after checking its Origin; a refused handshake is
// answered with 403 by gorilla.
func (g gorillaWebsocket) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	up := websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		Subprotocols:     opts.Subprotocols,
		CheckOrigin:      g.checkOrigin,
		WriteBufferPool:  websocketWriteBuffers,
		// Many small JSON frames: compression would cost more CPU than
		// it saves on loopback and LANs.
		EnableCompression: false,
	}
	conn, err := up.Upgrade(w, r, opts.ResponseHeader)
	if err != nil {
		return nil, err
	}
	return &gorillaConn{conn: conn}, nil
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
	conn *websocket.Conn
	mu   sync.Mutex
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

func (c *gorillaConn) WriteJSON(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(websocketWriteTimeout))
	return c.conn.WriteJSON(v)
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
