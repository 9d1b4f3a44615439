package diff_test

import (
	"testing"

	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/diff/difftest"
)

// TestCorpusVerdicts checks the engine against the generator's ground
// truth, in every output mode.
func TestCorpusVerdicts(t *testing.T) {
	d, err := diff.New(diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pairs := difftest.Corpus(240, 7)
	modified := 0
	for _, p := range pairs {
		for _, opts := range [][]diff.CallOption{nil, {diff.VerdictOnly()}, {diff.WithoutText()}} {
			res, err := d.Diff(t.Context(), p.Desired, p.Live, opts...)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			if res.Modified != p.Modified {
				t.Errorf("%s (opts %d): Modified = %v, want %v\n%s", p.Name, len(opts), res.Modified, p.Modified, res.Text)
			}
			if res.Modified && len(opts) == 0 && !hasChangedLine(res.Text) {
				t.Errorf("%s: Modified with no changed line in the diff:\n%s", p.Name, res.Text)
			}
		}
		if p.Modified {
			modified++
		}
	}
	if modified < len(pairs)/5 || modified > len(pairs)/2 {
		t.Errorf("corpus has %d of %d modified, want about 30%%", modified, len(pairs))
	}
}

// TestDiffConcurrent shares one Differ between goroutines, as the
// controller does; run under -race.
func TestDiffConcurrent(t *testing.T) {
	d, err := diff.New(diff.Options{Ignore: []diff.IgnoreRule{
		{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
		{Group: "*", Kind: "*", ManagedFieldsManagers: []string{"kube-controller-manager"}},
		{Kind: "ConfigMap", JQPathExpressions: []string{`.data["key-0"]`}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	pairs := difftest.Corpus(60, 3)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for _, p := range pairs {
				if _, err := d.Diff(t.Context(), p.Desired, p.Live); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
