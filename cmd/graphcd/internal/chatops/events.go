package chatops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// eventsSubscription selects the events that can mean trouble or need
// someone: an operation's phase and the health changing.
const eventsSubscription = `subscription {
  applicationEvents(filter: {types: [OperationPhaseChanged, HealthChanged]}) {
    lagged type name namespace health operationPhase message
  }
}`

// event is an ApplicationEvent as eventsSubscription selects it.
type event struct {
	Lagged         bool   `json:"lagged"`
	Type           string `json:"type"`
	Name           string `json:"name"`
	Namespace      string `json:"namespace"`
	Health         string `json:"health"`
	OperationPhase string `json:"operationPhase"`
	Message        string `json:"message"`
}

// started reports whether e is an operation starting (or going on), which
// may be a sync held for approval.
func (e event) started() bool {
	return e.Type == "OperationPhaseChanged" && e.OperationPhase == "Running"
}

// wsMessage is a message of the graphql-transport-ws protocol.
type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

const (
	// idleTimeout ends a socket that stays silent this long; the bot
	// pings every pingInterval and graphcd answers, so only a dead
	// connection is that quiet.
	idleTimeout = 90 * time.Second
	// pingInterval is how often the bot pings graphcd. graphcd sends no
	// keep-alive of its own over graphql-transport-ws, so without pings a
	// quiet socket would look dead.
	pingInterval = 30 * time.Second
	// minBackoff and maxBackoff bound the wait between reconnects.
	minBackoff = time.Second
	maxBackoff = time.Minute
)

// watchEvents relays events to the chat until ctx ends, reconnecting
// with exponential backoff whenever the socket drops. Events that happen
// while the bot is disconnected are not replayed: graphcd delivers them
// at most once.
func (b *bot) watchEvents(ctx context.Context) {
	backoff := minBackoff
	for {
		err := b.subscribe(ctx, func() { backoff = minBackoff })
		if ctx.Err() != nil {
			return
		}
		b.log.Warn("application events interrupted; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// subscribe opens one websocket, subscribes to the events and relays
// them until the socket ends; connected is called once graphcd accepted
// the token.
func (b *bot) subscribe(ctx context.Context, connected func()) error {
	endpoint := *b.server.JoinPath("api", "graphql")
	endpoint.Scheme = map[string]string{"http": "ws", "https": "wss"}[endpoint.Scheme]
	dialer := websocket.Dialer{
		Subprotocols:     []string{"graphql-transport-ws"},
		HandshakeTimeout: 10 * time.Second,
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  b.apiTLS,
	}
	conn, resp, err := dialer.DialContext(ctx, endpoint.String(), nil)
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return fmt.Errorf("open the websocket: %w", err)
	}
	defer func() { _ = conn.Close() }()
	// A blocked read returns when the socket closes.
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	conn.SetReadLimit(maxResponse)

	var writing sync.Mutex // the pings' goroutine writes too
	send := func(m wsMessage) error {
		writing.Lock()
		defer writing.Unlock()
		_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		return conn.WriteJSON(m)
	}
	stopPings := make(chan struct{})
	defer close(stopPings)
	init, _ := json.Marshal(map[string]string{"authorization": "Bearer " + b.token})
	if err := send(wsMessage{Type: "connection_init", Payload: init}); err != nil {
		return err
	}
	query, _ := json.Marshal(map[string]string{"query": eventsSubscription})
	for {
		_ = conn.SetReadDeadline(time.Now().Add(idleTimeout))
		var m wsMessage
		if err := conn.ReadJSON(&m); err != nil {
			if ce, ok := errors.AsType[*websocket.CloseError](err); ok && ce.Code == 4401 {
				return errors.New("graphcd refused the token (close code 4401)")
			}
			return err
		}
		switch m.Type {
		case "connection_ack":
			connected()
			go ping(send, b.pingEvery, stopPings)
			if err := send(wsMessage{Type: "subscribe", ID: "events", Payload: query}); err != nil {
				return err
			}
			b.log.Info("subscribed to application events")
		case "ping":
			if err := send(wsMessage{Type: "pong"}); err != nil {
				return err
			}
		case "next":
			var p struct {
				Data struct {
					ApplicationEvents event `json:"applicationEvents"`
				} `json:"data"`
				Errors apiError `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				return fmt.Errorf("decode an event: %w", err)
			}
			if len(p.Errors) > 0 {
				return p.Errors
			}
			b.relay(ctx, p.Data.ApplicationEvents)
		case "error":
			var errs apiError
			_ = json.Unmarshal(m.Payload, &errs)
			return fmt.Errorf("graphcd refused the subscription: %w", errs)
		case "complete":
			return errors.New("graphcd ended the subscription")
		}
	}
}

// ping sends a ping every interval until stop is closed or a send fails
// (the read loop then sees the socket end).
func ping(send func(wsMessage) error, interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if send(wsMessage{Type: "ping"}) != nil {
				return
			}
		}
	}
}

// relay posts e to the chat when it is worth a message. An operation
// that starts may become a sync held for approval: followHold finds out.
func (b *bot) relay(ctx context.Context, e event) {
	if e.started() {
		b.followHold(ctx, e)
	}
	text, ok := alertText(e)
	if !ok {
		return
	}
	if err := b.post(ctx, text); err != nil {
		b.log.Error("post to the chat", "app", e.Name, "err", err)
	}
}
