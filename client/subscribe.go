package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/Khan/genqlient/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Subscription is one GraphQL subscription on its own websocket, spoken
// in graphql-transport-ws: each Next returns the next result the server
// sends, decoded into a T.
type Subscription[T any] struct {
	conn   *websocket.Conn
	stop   context.CancelFunc
	ctx    context.Context
	closed sync.Once
}

// subscriptionID names the one subscription of a socket.
const subscriptionID = "1"

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Subscribe opens a websocket to c's server, authenticates with c's token
// in connection_init ({"authorization": "Bearer <token>"}) and starts req.
// The socket closes when ctx ends or Close is called.
func Subscribe[T any](ctx context.Context, c *Client, req *graphql.Request) (*Subscription[T], error) {
	endpoint, err := websocketURL(c.Server)
	if err != nil {
		return nil, err
	}
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, Proxy: http.ProxyFromEnvironment, TLSClientConfig: c.tls}
	conn, resp, err := d.DialContext(ctx, endpoint, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("open the GraphQL websocket: %w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, fmt.Errorf("open the GraphQL websocket: %w", err)
	}
	ctx, stop := context.WithCancel(ctx) //nolint:gosec // Close calls stop
	s := &Subscription[T]{conn: conn, stop: stop, ctx: ctx}
	// A blocked read ends when the socket closes: close it when ctx ends.
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	init := map[string]any{}
	if c.Token != "" {
		init["authorization"] = "Bearer " + c.Token
	}
	if err := s.send("connection_init", "", init); err != nil {
		s.Close()
		return nil, err
	}
	for {
		m, err := s.read()
		if err != nil {
			s.Close()
			return nil, err
		}
		if m.Type == "connection_ack" {
			break
		}
		if err := s.answerPing(m); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.send("subscribe", subscriptionID, req); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Next waits for the subscription's next result. It returns io.EOF when
// the server completes the subscription, an *APIError for the errors the
// server sends, and the context's error when it ends.
func (s *Subscription[T]) Next() (*T, error) {
	for {
		m, err := s.read()
		if err != nil {
			return nil, err
		}
		switch m.Type {
		case "next":
			var r graphql.BaseResponse[*T]
			if err := json.Unmarshal(m.Payload, &r); err != nil {
				return nil, fmt.Errorf("decode a subscription result: %w", err)
			}
			if len(r.Errors) > 0 {
				return nil, &APIError{Errors: r.Errors}
			}
			if r.Data == nil {
				return nil, errors.New("a subscription result without data")
			}
			return r.Data, nil
		case "error":
			var list gqlerror.List
			if err := json.Unmarshal(m.Payload, &list); err != nil || len(list) == 0 {
				return nil, fmt.Errorf("the server refused the subscription: %s", m.Payload)
			}
			return nil, &APIError{Errors: list}
		case "complete":
			return nil, io.EOF
		default:
			if err := s.answerPing(m); err != nil {
				return nil, err
			}
		}
	}
}

// Close ends the subscription and its socket.
func (s *Subscription[T]) Close() {
	s.closed.Do(func() {
		if s.ctx.Err() == nil {
			_ = s.send("complete", subscriptionID, nil)
			_ = s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
		}
		s.stop()
	})
}

func (s *Subscription[T]) answerPing(m wsMessage) error {
	switch m.Type {
	case "ping":
		return s.send("pong", "", nil)
	case "pong":
		return nil
	}
	return fmt.Errorf("unexpected %q message on the GraphQL websocket", m.Type)
}

func (s *Subscription[T]) send(typ, id string, payload any) error {
	m := wsMessage{Type: typ, ID: id}
	if payload != nil {
		raw, err := json.Marshal(payload)
		if err != nil {
			return err
		}
		m.Payload = raw
	}
	if err := s.conn.WriteJSON(m); err != nil {
		return s.socketErr(err)
	}
	return nil
}

func (s *Subscription[T]) read() (wsMessage, error) {
	var m wsMessage
	_, raw, err := s.conn.ReadMessage()
	if err != nil {
		return m, s.socketErr(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("decode a websocket message: %w", err)
	}
	return m, nil
}

// socketErr prefers the context's error, since a canceled context closes
// the socket, and names graphql-ws's close codes.
func (s *Subscription[T]) socketErr(err error) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
		switch ce.Code {
		case 4401:
			return &APIError{Errors: gqlerror.List{{Message: "the websocket was refused: " + orDefault(ce.Text, "unauthorized"),
				Extensions: map[string]any{"code": CodeUnauthenticated}}}}
		case 4403:
			return &APIError{Errors: gqlerror.List{{Message: "the websocket was refused: " + orDefault(ce.Text, "forbidden"),
				Extensions: map[string]any{"code": CodeForbidden}}}}
		}
		return fmt.Errorf("the server closed the websocket: %d %s", ce.Code, ce.Text)
	}
	return fmt.Errorf("GraphQL websocket: %w", err)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// websocketURL turns a server's http(s) base URL into its GraphQL
// websocket's ws(s) URL.
func websocketURL(server string) (string, error) {
	switch {
	case strings.HasPrefix(server, "https://"):
		return "wss://" + strings.TrimPrefix(server, "https://") + GraphQLPath, nil
	case strings.HasPrefix(server, "http://"):
		return "ws://" + strings.TrimPrefix(server, "http://") + GraphQLPath, nil
	}
	return "", fmt.Errorf("server URL %q: want http:// or https://", server)
}

// WatchApplication subscribes to an application's state: the first
// result is its state now, then one follows each change. Application is
// nil while the application does not exist.
func (c *Client) WatchApplication(ctx context.Context, name string, namespace *string) (*Subscription[WatchApplicationResponse], error) {
	return Subscribe[WatchApplicationResponse](ctx, c, &graphql.Request{
		OpName:    "WatchApplication",
		Query:     WatchApplication_Operation,
		Variables: map[string]any{"name": name, "namespace": namespace},
	})
}
