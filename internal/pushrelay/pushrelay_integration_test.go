//go:build integration

package pushrelay

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/keysign"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

var redisServer *localredis.Server

func TestMain(m *testing.M) { os.Exit(localredis.RunMain(m, &redisServer)) }

// queue records what a leader was handed; it compares apps of namespace
// "mine" and returns the others.
type queue chan []types.NamespacedName

func (q queue) RefreshPushed(_ context.Context, apps []types.NamespacedName) ([]types.NamespacedName, error) {
	q <- apps
	return slices.DeleteFunc(slices.Clone(apps), func(k types.NamespacedName) bool { return k.Namespace == "mine" }), nil
}

func newRelay(t *testing.T, secret string) *Relay {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	t.Cleanup(func() { _ = c.Close() })
	r, err := New(c, []byte(secret), nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const secret = "0123456789abcdef0123456789abcdef"

// The webhook side falls back to the annotations while no leader
// listens, and a leader is handed the apps once elected; a message not
// signed with the installation's secret, or forged in Redis, is dropped.
func TestRelay(t *testing.T) {
	api := newRelay(t, secret)
	apps := []types.NamespacedName{{Namespace: "mine", Name: "a"}, {Namespace: "other", Name: "b"}}

	rest, err := api.RefreshPushed(t.Context(), apps)
	if err != nil || !slices.Equal(rest, apps) {
		t.Fatalf("with no leader listening: rest %v, err %v; want every app back for the annotations", rest, err)
	}

	leader := newRelay(t, secret)
	q := make(queue, 4)
	elected := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go leader.Serve(ctx, elected, q)
	time.Sleep(200 * time.Millisecond)
	if rest, _ := api.RefreshPushed(t.Context(), apps); !slices.Equal(rest, apps) {
		t.Fatalf("a standby (not elected) took the push: rest %v", rest)
	}
	close(elected)
	deadline := time.Now().Add(10 * time.Second)
	for {
		rest, err = api.RefreshPushed(t.Context(), apps)
		if err != nil {
			t.Fatal(err)
		}
		if rest == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the elected leader never subscribed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case got := <-q:
		if !slices.Equal(got, apps) {
			t.Fatalf("the leader was handed %v, want %v", got, apps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leader was handed nothing")
	}

	// Forged: another secret, no signature, a signature over another
	// channel's key, too large.
	other := newRelay(t, "another secret of thirty-two bytes!")
	if rest, _ := other.RefreshPushed(t.Context(), apps); rest != nil {
		t.Fatalf("no subscriber received the forged message: %v", rest)
	}
	pub := redis.NewClient(&redis.Options{Addr: redisServer.Addr, Password: redisServer.Password})
	defer func() { _ = pub.Close() }()
	for _, raw := range []string{
		`{"apps":[["mine","a"]]}`,
		string(keysign.Sign([]byte(secret), "graphcd:events", []byte(`{"apps":[["mine","a"]]}`))),
		string(keysign.Sign([]byte(secret), Channel, make([]byte, maxMessage+1))),
		string(keysign.Sign([]byte(secret), Channel, []byte(`{"apps":`))),
	} {
		if err := pub.Publish(t.Context(), Channel, raw).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A valid message after them proves they were read and dropped.
	last := []types.NamespacedName{{Namespace: "mine", Name: "last"}}
	if _, err := api.RefreshPushed(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-q:
		if !slices.Equal(got, last) {
			t.Fatalf("the leader was handed %v before the valid message: a forged message went through", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the valid message after the forged ones never arrived")
	}
}

// A push matching more apps than one message carries goes out in several,
// each within what a leader decodes, even with the longest names.
func TestRelayChunks(t *testing.T) {
	api, leader := newRelay(t, secret), newRelay(t, secret)
	q := make(queue, 8)
	elected := make(chan struct{})
	close(elected)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go leader.Serve(ctx, elected, q)
	apps := make([]types.NamespacedName, 2*maxApps+1)
	for i := range apps {
		apps[i] = types.NamespacedName{Namespace: strings.Repeat("n", 63), Name: fmt.Sprintf("%0253d", i)}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rest, err := api.RefreshPushed(t.Context(), apps[:1])
		if err != nil {
			t.Fatal(err)
		}
		if rest == nil {
			<-q
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the leader never subscribed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rest, err := api.RefreshPushed(t.Context(), apps); rest != nil || err != nil {
		t.Fatalf("rest %d apps, err %v", len(rest), err)
	}
	var got []types.NamespacedName
	for range 3 {
		select {
		case part := <-q:
			got = append(got, part...)
		case <-time.After(10 * time.Second):
			t.Fatalf("the leader was handed %d of %d apps", len(got), len(apps))
		}
	}
	if !slices.Equal(got, apps) {
		t.Fatalf("the leader was handed %d apps, not the %d pushed in order", len(got), len(apps))
	}
}

func TestNewRefusesAShortSecret(t *testing.T) {
	if _, err := New(nil, []byte("short"), nil); err == nil {
		t.Fatal("a 5-byte secret was accepted")
	}
}
