//go:build integration

package insights

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) { os.Exit(localcluster.RunMain(m, localcluster.Options{}, &cluster)) }

// countGets returns a client of the cluster that counts its reads of
// single ConfigMaps (not lists or watches).
func countGets(t *testing.T) (kubernetes.Interface, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			_, name, ok := strings.Cut(req.URL.Path, "/configmaps/")
			if req.Method == http.MethodGet && ok && name != "" {
				n.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, &n
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// stateAt is a state record n seconds into the test.
func stateAt(start int64, n int, health string) Record {
	return Record{Kind: KindState, At: start + int64(n), Health: health, Sync: SyncSynced}
}

// A watched store reads and writes the logs without reading them from the
// API while its copy is current, and loses no record when another writer
// made it stale.
func TestStoreWatch(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	client, gets := countGets(t)
	s := &Store{Client: client, Namespace: ns}
	other := &Store{Client: cluster.Client, Namespace: ns}
	a := App{Namespace: "apps", Name: "a", Project: "default"}
	b := App{Namespace: "apps", Name: "b", Project: "default"}
	start := time.Now().Unix()
	ctx := t.Context()

	if err := s.Append(ctx, a, []Record{stateAt(start, 1, HealthHealthy)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if gets.Load() == 0 {
		t.Fatal("an unwatched store appended without reading the log")
	}
	if err := s.Watch(ctx); err != nil {
		t.Fatal(err)
	}
	gets.Store(0)
	recs, err := s.Load(ctx, Key{a.Namespace, a.Name})
	if err != nil || len(recs) != 1 {
		t.Fatalf("load a: %v, %v; want its one record", recs, err)
	}
	if err := s.Append(ctx, a, []Record{stateAt(start, 2, HealthDegraded)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, b, []Record{stateAt(start, 3, HealthHealthy)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("a watched store read the logs %d times to load one and append to two", n)
	}

	// Another writer appends; this store's copy may lag behind it, and
	// its next append must keep that writer's record.
	if err := other.Append(ctx, a, []Record{stateAt(start, 4, HealthHealthy)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, a, []Record{stateAt(start, 5, HealthDegraded)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	recs, err = other.Load(ctx, Key{a.Namespace, a.Name})
	if err != nil {
		t.Fatal(err)
	}
	var at []int64
	for _, r := range recs {
		at = append(at, r.At-start)
	}
	if want := []int64{1, 2, 4, 5}; !slices.Equal(at, want) {
		t.Fatalf("a's records at %v (seconds from the start), want %v", at, want)
	}
	if recs, err := other.Load(ctx, Key{b.Namespace, b.Name}); err != nil || len(recs) != 1 {
		t.Fatalf("load b: %v, %v; want its one record", recs, err)
	}
}
