// Package pushrelay hands the apps a webhook push matched from an API
// replica to the controller shards' leaders, through Redis pub/sub, so
// that split roles queue a pushed app for comparison at once, as one
// process does, instead of writing a refresh annotation per app (a GET
// and a PUT each, four at a time: about 20 apps a second).
//
// A message is the apps' keys as JSON, signed with the secret every
// replica shares (--redis-secret-file): what does not verify is dropped.
// Only leaders subscribe, so a publish that no subscriber received (no
// controller leads, or controllers older than the relay) falls back to
// the annotations. A leader that misses a message, because it was being
// elected then, compares every app of its shard when it starts leading,
// resolving each repository afresh (controller.Reconciler's fresh set).
package pushrelay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/keysign"
)

// Channel is the Redis pub/sub channel of the pushed apps.
const Channel = "graphcd:pushed"

// maxApps is the most apps one message carries, and maxMessage bounds a
// message a subscriber decodes: maxApps apps of the longest namespace (63
// bytes) and name (253 bytes) with their JSON take about 3.3 MB.
const (
	maxApps    = 10_000
	maxMessage = 6 << 20
)

// Queue takes the pushed apps: a controller's RefreshPushed, which returns
// those it does not compare.
type Queue interface {
	RefreshPushed(ctx context.Context, apps []types.NamespacedName) (rest []types.NamespacedName, err error)
}

// Relay publishes and receives pushed apps on one Redis.
type Relay struct {
	client *redis.Client
	secret []byte
	log    *slog.Logger
}

// New returns a relay over client, signing with secret (at least
// keysign.MinSecret bytes).
func New(client *redis.Client, secret []byte, log *slog.Logger) (*Relay, error) {
	if len(secret) < keysign.MinSecret {
		return nil, fmt.Errorf("the secret is %d bytes, fewer than %d", len(secret), keysign.MinSecret)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Relay{client: client, secret: secret, log: log}, nil
}

// message is what travels: namespace and name of each app.
type message struct {
	Apps [][2]string `json:"apps"`
}

// RefreshPushed publishes apps to the leaders, as the webhook's Queue, in
// messages of at most maxApps apps, so that none outgrows what a leader
// decodes. It returns the apps of the messages no leader received, for
// the annotations.
func (r *Relay) RefreshPushed(ctx context.Context, apps []types.NamespacedName) (rest []types.NamespacedName, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for chunk := range slices.Chunk(apps, maxApps) {
		m := message{Apps: make([][2]string, len(chunk))}
		for i, k := range chunk {
			m.Apps[i] = [2]string{k.Namespace, k.Name}
		}
		payload, err := json.Marshal(m)
		if err != nil {
			return append(rest, chunk...), err
		}
		n, err := r.client.Publish(ctx, Channel, keysign.Sign(r.secret, Channel, payload)).Result()
		if err != nil {
			return append(rest, chunk...), fmt.Errorf("publish the pushed apps: %w", err)
		}
		if n == 0 {
			rest = append(rest, chunk...) // no leader listens
		}
	}
	return rest, nil
}

// Serve waits until elected is closed (the controller leads its shard),
// then hands every verified message's apps to q until ctx ends,
// subscribing again after a lost connection.
func (r *Relay) Serve(ctx context.Context, elected <-chan struct{}, q Queue) {
	select {
	case <-ctx.Done():
		return
	case <-elected:
	}
	for ctx.Err() == nil {
		if err := r.session(ctx, q); err != nil && ctx.Err() == nil {
			r.log.Warn("pushed apps relay: subscription lost; subscribing again", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

func (r *Relay) session(ctx context.Context, q Queue) error {
	ps := r.client.Subscribe(ctx, Channel)
	defer func() { _ = ps.Close() }()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		return err
	}
	for {
		msg, err := ps.ReceiveMessage(ctx)
		if err != nil {
			return err
		}
		apps, err := r.decode(msg.Payload)
		if err != nil {
			r.log.Warn("pushed apps relay: message dropped", "err", err)
			continue
		}
		rest, err := q.RefreshPushed(ctx, apps)
		if err != nil {
			r.log.Warn("pushed apps relay: cannot queue the pushed apps", "apps", len(apps), "err", err)
			continue
		}
		r.log.Info("webhook push relayed", "apps", len(apps), "queued", len(apps)-len(rest))
	}
}

// errUnsigned is a message that does not verify.
var errUnsigned = errors.New("not signed with this installation's secret")

// decode verifies and decodes one message.
func (r *Relay) decode(raw string) ([]types.NamespacedName, error) {
	if len(raw) > maxMessage {
		return nil, fmt.Errorf("%d bytes, more than %d", len(raw), maxMessage)
	}
	payload, ok := keysign.Open(r.secret, Channel, []byte(raw))
	if !ok {
		return nil, errUnsigned
	}
	var m message
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	apps := make([]types.NamespacedName, 0, len(m.Apps))
	for _, a := range m.Apps {
		if a[0] == "" || a[1] == "" {
			continue
		}
		apps = append(apps, types.NamespacedName{Namespace: a[0], Name: a[1]})
	}
	return apps, nil
}
