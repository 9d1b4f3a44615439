//go:build integration

package sync_test

import (
	"context"
	gosync "sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
)

// blindReader answers like a cache that has not caught up: the first
// reads of each object find nothing, whatever the API server holds; later
// reads get the API server's answer.
type blindReader struct {
	blind int
	mu    gosync.Mutex
	reads map[string]int
}

func (b *blindReader) Get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	key := gvk.String() + "/" + namespace + "/" + name
	b.mu.Lock()
	b.reads[key]++
	n := b.reads[key]
	b.mu.Unlock()
	if n <= b.blind {
		return nil, nil
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	obj, err := dyn.Resource(m.Resource).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}

func blindExecutor(t *testing.T) *sync.Executor {
	t.Helper()
	e, err := sync.New(sync.Config{Client: dyn, Mapper: mapper, WaveDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond,
		Reader: &blindReader{blind: 2, reads: map[string]int{}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A sync whose live reads come from a cache that has not caught up runs
// the same waves in the same order: an apply that meets an object the
// cache has not seen reads the API server and goes on, and a hook the
// cache has not seen yet is not taken for deleted.
func TestReaderBehindTheAPIServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "waves.yaml")
	h.exec = blindExecutor(t)
	h.sync(v1alpha1.OperationSucceeded)
	checkOrder(t, order(h.state, "schema-upgrade-", "maintenance-on-"), wavesOrder)
	// A second sync over existing objects the (new) cache has not seen:
	// unchanged resources stay unchanged.
	h.exec = blindExecutor(t)
	h.state = nil
	h.sync(v1alpha1.OperationSucceeded)
	if r := result(t, h.state, "Deployment", "frontend"); r.Message != "deployment.apps/frontend unchanged" {
		t.Errorf("frontend message on the second sync %q", r.Message)
	}
}
