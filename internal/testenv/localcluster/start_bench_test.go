//go:build integration

package localcluster_test

import (
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// BenchmarkStart measures how long a test package waits for its cluster:
// from nothing to a serving API (Minimal) or to Ready fake nodes (Full),
// plus the stop.
func BenchmarkStart(b *testing.B) {
	for _, mode := range []localcluster.Mode{localcluster.Minimal, localcluster.Full} {
		b.Run(mode.String(), func(b *testing.B) {
			for b.Loop() {
				c, err := localcluster.Start(b.Context(), localcluster.Options{Mode: mode})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Stop(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
