package diffpeer

import (
	"testing"

	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/diff/difftest"
)

// benchPairs is shared by every benchmark, one pair per op, so that the
// ns/op of the engines and of the JSON round trip divide directly.
var benchPairs = difftest.Corpus(240, 1)

// BenchmarkDiff runs both engines over the same corpus in one run.
func BenchmarkDiff(b *testing.B) {
	d, err := NewGraphcd()
	if err != nil {
		b.Fatal(err)
	}
	graphcd := func(opts ...diff.CallOption) func(*testing.B) {
		return func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p := benchPairs[i%len(benchPairs)]
				if _, err := d.Diff(ctx, p.Desired, p.Live, opts...); err != nil {
					b.Fatal(err)
				}
				i++
			}
		}
	}
	// Full result: normalized objects, unified text for modified pairs.
	b.Run("graphcd", graphcd())
	// Sync-status path: Modified alone.
	b.Run("graphcd-verdict", graphcd(diff.VerdictOnly()))
	b.Run("gitops-engine", func(b *testing.B) {
		opts := PeerOptions()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p := benchPairs[i%len(benchPairs)]
			if _, err := PeerDiff(p.Desired, p.Live, opts...); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkJSONRoundTrip is the yardstick: marshal and unmarshal both
// objects of a pair.
func BenchmarkJSONRoundTrip(b *testing.B) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := JSONRoundTrip(benchPairs[i%len(benchPairs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
