package statusboard

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// boardTests run against every Board; now moves the board's clock.
func boardTests(t *testing.T, b Board, now *time.Time) {
	ctx := t.Context()
	start := *now
	t.Run("clusters of fresh shards, by server", func(t *testing.T) {
		*now = start
		if err := b.PutClusters(ctx, 1, []Cluster{{Server: "https://b", Status: Failed, Message: "refused", Shard: 1}}); err != nil {
			t.Fatal(err)
		}
		if err := b.PutClusters(ctx, 0, []Cluster{{Server: "https://c", Status: Successful}, {Server: "https://a", Status: Unknown}}); err != nil {
			t.Fatal(err)
		}
		got, err := b.Clusters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		servers := make([]string, 0, len(got))
		for _, c := range got {
			servers = append(servers, c.Server)
		}
		if diff := cmp.Diff(servers, []string{"https://a", "https://b", "https://c"}); diff != "" {
			t.Errorf("servers (-got +want):\n%s", diff)
		}
		// Shard 1 stops publishing; shard 0 publishes again later.
		*now = start.Add(StaleAfter - time.Second)
		if err := b.PutClusters(ctx, 0, []Cluster{{Server: "https://a", Status: Successful}}); err != nil {
			t.Fatal(err)
		}
		*now = start.Add(StaleAfter + time.Second)
		got, err = b.Clusters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Server != "https://a" || got[0].Status != Successful {
			t.Errorf("after shard 1 went stale: %+v, want shard 0's latest only", got)
		}
	})
	t.Run("components beat and go stale", func(t *testing.T) {
		*now = start
		long := strings.Repeat("x", 5000)
		for _, c := range []Component{
			{Kind: KindController, ID: "ctl-b", Shard: 1, Leader: true},
			{Kind: KindAPI, ID: "api-1", Version: long},
			{Kind: KindController, ID: "ctl-a", Shard: 0, Leader: true, Clusters: make([]string, 500)},
		} {
			if err := b.Beat(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		*now = start.Add(time.Second)
		if err := b.Beat(ctx, Component{Kind: KindAPI, ID: "api-1"}); err != nil {
			t.Fatal(err)
		}
		got, err := b.Components(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
			if len(c.Version) > maxText || len(c.Clusters) > MaxComponentClusters {
				t.Errorf("%s is not bounded: version %d bytes, %d clusters", c.ID, len(c.Version), len(c.Clusters))
			}
		}
		if diff := cmp.Diff(ids, []string{"api-1", "ctl-a", "ctl-b"}); diff != "" {
			t.Errorf("components (-got +want):\n%s", diff)
		}
		if !got[0].Seen.Equal(start.Add(time.Second)) {
			t.Errorf("api-1 last seen %v, want its latest beat", got[0].Seen)
		}
		*now = start.Add(StaleAfter + 500*time.Millisecond)
		if got, err = b.Components(ctx); err != nil || len(got) != 1 || got[0].ID != "api-1" {
			t.Errorf("after the controllers went stale: %+v %v, want api-1 only", got, err)
		}
	})
}

func TestMemory(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewMemory()
	m.now = func() time.Time { return now }
	boardTests(t, m, &now)
}

func TestNewIDDiffers(t *testing.T) {
	if a, b := NewID(), NewID(); a == b || a == "" {
		t.Errorf("NewID gave %q and %q", a, b)
	}
}
