package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/clusters"
)

// Pinned answers: every replica, of every version, must agree on them. They
// can be checked by hand, e.g. for the in-cluster server and 4 shards:
//
//	for i in 0 1 2 3; do printf '%s' "https://kubernetes.default.svc#$i" | sha256sum | cut -c1-16; done
//
// prints the scores of shards 0..3; the highest (shard 2) wins.
func TestShardOfPinned(t *testing.T) {
	for _, tc := range []struct {
		server string
		shards int
		want   int
	}{
		{InClusterServer, 1, 0},
		{InClusterServer, 2, 1},
		{InClusterServer, 3, 2},
		{InClusterServer, 4, 2},
		{InClusterServer, 8, 4},
		{"https://prod.example.com", 2, 0},
		{"https://prod.example.com", 8, 6},
		{"https://staging.example.com:443", 4, 3},
		{"https://10.0.0.1:6443", 8, 5},
	} {
		got, err := ShardOf(tc.server, tc.shards)
		if err != nil || got != tc.want {
			t.Errorf("ShardOf(%q, %d) = %d, %v; want %d", tc.server, tc.shards, got, err, tc.want)
		}
	}
}

func TestShardOfBadInput(t *testing.T) {
	for _, tc := range []struct {
		server string
		shards int
		want   string
	}{
		{InClusterServer, 0, "shard count must be at least 1, got 0"},
		{InClusterServer, -3, "shard count must be at least 1, got -3"},
		{"", 2, "empty cluster server URL"},
	} {
		_, err := ShardOf(tc.server, tc.shards)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ShardOf(%q, %d) error = %v, want %q", tc.server, tc.shards, err, tc.want)
		}
	}
}

// servers returns n distinct cluster URLs shaped like real ones.
func servers(n int) []string {
	out := make([]string, n)
	for i := range out {
		switch i % 3 {
		case 0:
			out[i] = fmt.Sprintf("https://10.%d.%d.1:6443", i/256%256, i%256)
		case 1:
			out[i] = fmt.Sprintf("https://cluster-%d.eu-west-1.eks.amazonaws.com", i)
		default:
			out[i] = fmt.Sprintf("https://k8s-%05d.example.com:443/", i)
		}
	}
	return out
}

// Clusters spread evenly: with 9,000 clusters each shard gets its fair
// share within 10 %.
func TestShardOfDistribution(t *testing.T) {
	urls := servers(9000)
	for _, shards := range []int{2, 3, 5, 8} {
		count := make([]int, shards)
		for _, u := range urls {
			n, err := ShardOf(u, shards)
			if err != nil || n < 0 || n >= shards {
				t.Fatalf("ShardOf(%q, %d) = %d, %v", u, shards, n, err)
			}
			count[n]++
		}
		fair := len(urls) / shards
		for i, c := range count {
			if c < fair*9/10 || c > fair*11/10 {
				t.Errorf("%d shards: shard %d got %d clusters, want %d ± 10%% (all: %v)", shards, i, c, fair, count)
			}
		}
	}
}

// Adding a shard moves only the clusters the new shard wins, about
// 1/(M+1) of them; removing the last shard moves only its own clusters.
func TestShardOfStableWhenShardsGrow(t *testing.T) {
	urls := servers(6000)
	for shards := 1; shards <= 6; shards++ {
		moved := 0
		for _, u := range urls {
			before, _ := ShardOf(u, shards)
			after, _ := ShardOf(u, shards+1)
			if after == before {
				continue
			}
			if after != shards {
				t.Fatalf("%d -> %d shards: %q moved from shard %d to old shard %d; only moves to the new shard are allowed", shards, shards+1, u, before, after)
			}
			moved++
		}
		want := len(urls) / (shards + 1)
		if moved < want*85/100 || moved > want*115/100 {
			t.Errorf("%d -> %d shards moved %d of %d clusters, want about %d", shards, shards+1, moved, len(urls), want)
		}
	}
}

func TestShardValidate(t *testing.T) {
	for _, tc := range []struct {
		shard Shard
		want  string // "" = valid
	}{
		{Shard{}, ""},
		{Shard{Index: 0, Count: 1}, ""},
		{Shard{Index: 2, Count: 3}, ""},
		{Shard{Index: 1}, "shard 1 is out of range: with 1 shards they are numbered 0 to 0"},
		{Shard{Index: 3, Count: 3}, "shard 3 is out of range: with 3 shards they are numbered 0 to 2"},
		{Shard{Index: -1, Count: 3}, "shard -1 is out of range: with 3 shards they are numbered 0 to 2"},
		{Shard{Index: 0, Count: -2}, "shard count must be at least 1, got -2"},
	} {
		got := ""
		if err := tc.shard.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v.Validate() = %q, want %q", tc.shard, got, tc.want)
		}
	}
}

// Exactly one shard owns each destination, a destination by the name
// in-cluster is the in-cluster server, and a destination naming no known
// cluster goes to shard 0 (which reports it invalid).
func TestShardOwnsDestination(t *testing.T) {
	dests := map[string]v1alpha1.ApplicationDestination{
		"server":        {Server: InClusterServer},
		"name":          {Name: InClusterName},
		"server wins":   {Server: InClusterServer, Name: "elsewhere"},
		"other server":  {Server: "https://prod.example.com"},
		"unknown name":  {Name: "prod"},
		"no cluster":    {Namespace: "shop"},
		"trailing path": {Server: InClusterServer + "/"},
	}
	inCluster, _ := ShardOf(InClusterServer, 3)
	prod, _ := ShardOf("https://prod.example.com", 3)
	trailing, _ := ShardOf(InClusterServer+"/", 3)
	want := map[string]int{
		"server": inCluster, "name": inCluster, "server wins": inCluster, "other server": prod,
		"unknown name": 0, "no cluster": 0, "trailing path": trailing,
	}
	got := map[string]int{}
	for name, d := range dests {
		var owners []int
		for i := range 3 {
			if (Shard{Index: i, Count: 3}).OwnsDestination(d) {
				owners = append(owners, i)
			}
		}
		if len(owners) != 1 {
			t.Errorf("%s: owned by shards %v, want exactly one", name, owners)
			continue
		}
		got[name] = owners[0]
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("owners (-got +want):\n%s", diff)
	}
	for name, d := range dests {
		if !(Shard{}).OwnsDestination(d) {
			t.Errorf("the zero Shard does not own %s", name)
		}
	}
}

func TestShardString(t *testing.T) {
	got := []string{Shard{}.String(), Shard{Index: 2, Count: 5}.String()}
	if diff := cmp.Diff(strings.Join(got, " "), "0/1 2/5"); diff != "" {
		t.Errorf("String (-got +want):\n%s", diff)
	}
}

// claim lets through only the apps of the shard's clusters, forgets the
// others, and holds owned in-cluster apps until the cluster cache is ready.
func TestClaim(t *testing.T) {
	owner, _ := ShardOf(InClusterServer, 2)
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Destination: v1alpha1.ApplicationDestination{Name: InClusterName}}}
	app.Namespace, app.Name = "graphcd", "shop"
	key := types.NamespacedName{Namespace: "graphcd", Name: "shop"}

	other, err := NewReconciler(nil, Options{Shard: Shard{Index: 1 - owner, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	other.memory.setState(key, &AppState{Revision: "abc"})
	if _, ok := other.claim(t.Context(), app); ok {
		t.Error("the other shard claimed an in-cluster app")
	}
	if other.State(key) != nil {
		t.Error("the other shard kept the state of an app it does not own")
	}

	ready := make(chan struct{})
	r, err := NewReconciler(nil, Options{Shard: Shard{Index: owner, Count: 2}, LiveReady: ready})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := r.claim(ctx, app); ok {
		t.Error("claimed an app before the cluster cache was ready")
	}
	close(ready)
	if _, ok := r.claim(t.Context(), app); !ok {
		t.Error("the owning shard did not claim its app once the cache was ready")
	}
}

// A cluster Secret's shard pins the cluster; without one, or with one
// outside the shard range, the hashed shard owns it.
func TestShardOwnsCluster(t *testing.T) {
	const server = "https://prod.example.com"
	hashed, _ := ShardOf(server, 3)
	pinned := (hashed + 1) % 3
	cases := map[string]struct {
		shard *int
		want  int
	}{
		"no pin":       {nil, hashed},
		"pinned":       {ptr.To(pinned), pinned},
		"out of range": {ptr.To(7), hashed},
	}
	for name, tc := range cases {
		c := &clusters.Cluster{Name: "prod", Server: server, Shard: tc.shard}
		var owners []int
		for i := range 3 {
			if (Shard{Index: i, Count: 3}).OwnsCluster(c) {
				owners = append(owners, i)
			}
		}
		if diff := cmp.Diff(owners, []int{tc.want}); diff != "" {
			t.Errorf("%s: owners (-got +want):\n%s", name, diff)
		}
		if !(Shard{}).OwnsCluster(c) {
			t.Errorf("%s: the zero Shard does not own the cluster", name)
		}
	}
}

// Round robin deals the registered clusters, sorted by server URL, to the
// shards in turn: the shards' counts differ by one at most, a pin still
// wins, a server not registered goes to shard 0, and a Shard frozen
// before the clusters change keeps the old owners.
func TestShardRoundRobin(t *testing.T) {
	list := make([]*clusters.Cluster, 10)
	for i := range list {
		list[i] = &clusters.Cluster{Name: fmt.Sprint("c", i), Server: fmt.Sprintf("https://127.0.0.1:%d", 40000+(i*7919)%1000)}
	}
	shards := make([]Shard, 3)
	for i := range shards {
		shards[i] = Shard{Index: i, Count: 3, Method: ShardRoundRobin}
		shards[i].followOrder()
		shards[i].arrange(list)
	}
	sorted := make([]string, len(list))
	for i, c := range list {
		sorted[i] = c.Server
	}
	slices.Sort(sorted)
	for place, server := range sorted {
		c := &clusters.Cluster{Server: server}
		var owners []int
		for i, s := range shards {
			if s.OwnsCluster(c) {
				owners = append(owners, i)
			}
		}
		if diff := cmp.Diff(owners, []int{place % 3}); diff != "" {
			t.Errorf("%s, place %d: owners (-got +want):\n%s", server, place, diff)
		}
	}
	assigned, err := Assign(ShardRoundRobin, sorted, 3)
	if err != nil {
		t.Fatal(err)
	}
	for place, server := range sorted {
		if assigned[server] != place%3 {
			t.Errorf("Assign gave %s shard %d, want %d", server, assigned[server], place%3)
		}
	}

	pinned := &clusters.Cluster{Server: sorted[0], Shard: ptr.To(2)}
	if shards[0].OwnsCluster(pinned) || !shards[2].OwnsCluster(pinned) {
		t.Error("a pin did not win over the round robin")
	}
	if !shards[0].Owns("https://not-registered.example.com") || shards[1].Owns("https://not-registered.example.com") {
		t.Error("a server not registered does not go to shard 0")
	}

	before := shards[1].frozen()
	shards[1].arrange(append(list, &clusters.Cluster{Server: "https://127.0.0.0:1"})) // sorts first
	if !before.Owns(sorted[1]) || shards[1].Owns(sorted[1]) || !shards[1].Owns(sorted[0]) {
		t.Errorf("after a cluster sorting first: before owns %s: %v (want true), now %v (want false); now owns %s: %v (want true)",
			sorted[1], before.Owns(sorted[1]), shards[1].Owns(sorted[1]), sorted[0], shards[1].Owns(sorted[0]))
	}

	if err := (Shard{Method: "legacy"}).Validate(); err == nil || err.Error() != `unknown sharding method "legacy": use hash or round-robin` {
		t.Errorf("Validate of an unknown method: %v", err)
	}
}

// Without a registry only in-cluster resolves, by server or name, and
// the errors say what is missing the way the registry words them.
func TestSingleDestinationResolve(t *testing.T) {
	s := singleDestination{}
	cases := []struct {
		dest v1alpha1.ApplicationDestination
		want string // error; "" resolves to in-cluster
	}{
		{v1alpha1.ApplicationDestination{Server: InClusterServer}, ""},
		{v1alpha1.ApplicationDestination{Server: InClusterServer + "/"}, ""},
		{v1alpha1.ApplicationDestination{Name: InClusterName}, ""},
		{v1alpha1.ApplicationDestination{Name: InClusterName, Server: InClusterServer}, ""},
		{v1alpha1.ApplicationDestination{Namespace: "shop"}, "application destination has neither a server nor a name: set one of them"},
		{v1alpha1.ApplicationDestination{Server: "https://prod.example.com"}, "cluster https://prod.example.com not found: cluster not registered"},
		{v1alpha1.ApplicationDestination{Name: "prod"}, "there are no clusters with this name: prod: cluster not registered"},
	}
	for _, tc := range cases {
		c, err := s.Resolve(tc.dest)
		got := ""
		if err != nil {
			got = err.Error()
		} else if c.Server != InClusterServer || c.Name != InClusterName {
			got = "resolved to " + c.Name + " " + c.Server
		}
		if got != tc.want {
			t.Errorf("Resolve(%+v) = %q, want %q", tc.dest, got, tc.want)
		}
	}
}
