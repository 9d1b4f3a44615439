package difftest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCorpusDeterministicAndVaried(t *testing.T) {
	a, b := Corpus(240, 42), Corpus(240, 42)
	if diffs := cmp.Diff(a, b); diffs != "" {
		t.Fatalf("same seed, different corpus:\n%s", diffs)
	}
	kinds := map[string]int{}
	modified := 0
	for _, p := range a {
		kinds[p.Live.GetKind()]++
		if p.Modified {
			modified++
		}
		if p.Live.GetAnnotations()[LastApplied] == "" || len(p.Live.GetManagedFields()) == 0 {
			t.Errorf("%s: live lacks last-applied or managedFields", p.Name)
		}
	}
	if len(kinds) < 6 {
		t.Errorf("kinds = %v, want at least 6", kinds)
	}
	if modified < 48 || modified > 110 {
		t.Errorf("%d of 240 modified, want about 30%%", modified)
	}
	if diffs := cmp.Diff(Corpus(5, 1)[0].Live.Object, Corpus(5, 2)[0].Live.Object); diffs == "" {
		t.Error("different seeds gave the same object")
	}
}
