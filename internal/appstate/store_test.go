package appstate_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/internal/appstate"
)

func TestMemoryConformance(t *testing.T) {
	runConformance(t, func(*testing.T) appstate.Store { return appstate.NewMemory() })
}

func TestEncodeRoundTrip(t *testing.T) {
	want := sampleState(7)
	b, err := appstate.Encode(want, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appstate.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(*got, want); d != "" {
		t.Errorf("Decode(Encode) (-got +want):\n%s", d)
	}
	again, _ := appstate.Encode(want, 0)
	if !bytes.Equal(b, again) {
		t.Error("encoding the same state twice gave different bytes")
	}
}

// States written before Node.CreatedAt became a pointer (and Node.Missing
// existed) still decode: gob flattens pointers and skips absent fields,
// so a rolling upgrade keeps the trees it finds.
func TestDecodeStateOfEarlierNodes(t *testing.T) {
	type earlierNode struct {
		Kind, Name, UID string
		CreatedAt       time.Time
	}
	type earlierState struct {
		App  types.NamespacedName
		Tree []earlierNode
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var buf bytes.Buffer
	buf.WriteByte(1) // format version 1
	zw := gzip.NewWriter(&buf)
	err := gob.NewEncoder(zw).Encode(earlierState{
		App:  types.NamespacedName{Namespace: "graphcd", Name: "old"},
		Tree: []earlierNode{{Kind: "ConfigMap", Name: "settings", UID: "u1", CreatedAt: created}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := appstate.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []appstate.Node{{Kind: "ConfigMap", Name: "settings", UID: "u1", CreatedAt: &created}}
	if d := cmp.Diff(got.Tree, want); d != "" {
		t.Errorf("tree (-got +want):\n%s", d)
	}
}

func TestDecodeRefusesOtherFormats(t *testing.T) {
	b, err := appstate.Encode(sampleState(1), 0)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"empty":         nil,
		"other version": append([]byte{2}, b[1:]...),
		"not gzip":      append([]byte{b[0]}, []byte(`{"app":{}}`)...),
		"truncated":     b[:len(b)/2],
	} {
		if _, err := appstate.Decode(in); err == nil {
			t.Errorf("%s: Decode succeeded", name)
		}
	}
}

// A state over the cap loses its texts before it is refused.
func TestEncodeSizeCap(t *testing.T) {
	st := sampleState(1)
	rnd := rand.New(rand.NewPCG(1, 2)) //nolint:gosec // incompressible test data
	noise := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte(byte('a' + rnd.IntN(26)))
		}
		return sb.String()
	}
	st.Managed[0].Live, st.Managed[0].Desired = noise(64<<10), noise(64<<10)
	b, err := appstate.Encode(st, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	got, err := appstate.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Truncated || got.Managed[0].Live != "" || got.Managed[0].Desired != "" || got.Managed[0].Diff != "" {
		t.Errorf("over the cap: truncated=%v live=%d desired=%d diff=%d bytes; want texts dropped",
			got.Truncated, len(got.Managed[0].Live), len(got.Managed[0].Desired), len(got.Managed[0].Diff))
	}
	if got.Managed[0].Status != st.Managed[0].Status || len(got.Tree) != len(st.Tree) {
		t.Error("truncation dropped more than the texts")
	}
	for i := range 2000 {
		st.Tree = append(st.Tree, appstate.Node{Kind: "Pod", Name: fmt.Sprintf("p-%d-%s", i, noise(40))})
	}
	if _, err := appstate.Encode(st, 32<<10); !errors.Is(err, appstate.ErrTooLarge) {
		t.Errorf("a tree over the cap: err = %v, want ErrTooLarge", err)
	}
}

// countingStore counts the Puts that reach it.
type countingStore struct {
	appstate.Store
	puts int
}

func (c *countingStore) Put(ctx context.Context, s appstate.State) error {
	c.puts++
	return c.Store.Put(ctx, s)
}

func TestWriterSkipsUnchanged(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	store := &countingStore{Store: appstate.NewMemory()}
	w := appstate.NewWriter(store, appstate.WriterOptions{Rewrite: time.Hour, Now: func() time.Time { return now }})
	st := sampleState(1)
	steps := []struct {
		name   string
		change func()
		want   bool
	}{
		{"first", func() {}, true},
		{"only reconciledAt moved", func() { st.ReconciledAt = st.ReconciledAt.Add(time.Minute); now = now.Add(time.Minute) }, false},
		{"content changed", func() { st.Managed[0].Status = "Synced" }, true},
		{"unchanged again", func() { now = now.Add(30 * time.Minute) }, false},
		{"rewrite period passed", func() { now = now.Add(time.Hour) }, true},
	}
	for _, s := range steps {
		s.change()
		got, err := w.Write(t.Context(), st)
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want {
			t.Errorf("%s: wrote = %v, want %v", s.name, got, s.want)
		}
	}
	if store.puts != 3 {
		t.Errorf("store saw %d puts, want 3", store.puts)
	}
	stored, _ := store.Get(t.Context(), st.App)
	if stored == nil || stored.Managed[0].Status != "Synced" {
		t.Fatalf("stored state = %+v", stored)
	}
	if err := w.Delete(t.Context(), st.App); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Get(t.Context(), st.App); got != nil {
		t.Error("state still stored after Writer.Delete")
	}
	// After a delete the same content is written again.
	if wrote, err := w.Write(t.Context(), st); err != nil || !wrote {
		t.Errorf("Write after Delete = %v, %v; want a write", wrote, err)
	}
}
