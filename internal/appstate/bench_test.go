package appstate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/appstate"
)

// bigState is an app of 40 managed resources whose live and desired YAML
// run to 40 lines each, and a tree of 100 nodes.
func bigState(n int) appstate.State {
	st := sampleState(n)
	for j := range 40 {
		m := st.Managed[0]
		m.Name = fmt.Sprintf("r-%d", j)
		m.Live = strings.Repeat(fmt.Sprintf("  field-%d: value of the live object\n", j), 40)
		m.Desired = m.Live
		st.Managed = append(st.Managed, m)
	}
	for j := range 100 {
		node := st.Tree[2]
		node.Name = fmt.Sprintf("pod-%d", j)
		st.Tree = append(st.Tree, node)
	}
	return st
}

// BenchmarkEncode and BenchmarkDecode measure the codec on one bigState.
func BenchmarkEncode(b *testing.B) {
	st := bigState(1)
	var size int
	for b.Loop() {
		out, err := appstate.Encode(st, 0)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes")
}

func BenchmarkDecode(b *testing.B) {
	enc, err := appstate.Encode(bigState(1), 0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := appstate.Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
