package controller

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// versions hands out an object at each resourceVersion of a list in turn,
// as an API server whose object a controller keeps writing to would.
type versions struct {
	rvs []string
	n   int
}

func (v *versions) next() *unstructured.Unstructured {
	rv := v.rvs[min(v.n, len(v.rvs)-1)]
	v.n++
	o := deployment()
	o.SetResourceVersion(rv)
	return o
}

// movingLive is a LiveState whose reads past the cache meet the versions
// in turn; dryRuns answers dry runs the same way.
type movingLive struct {
	LiveState
	reads *versions
}

func (m movingLive) Fetch(context.Context, ResourceKey) (*unstructured.Unstructured, error) {
	return m.reads.next(), nil
}

type dryRuns struct{ *versions }

func (d dryRuns) DryRunApply(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
	return d.next(), nil
}

func deployment() *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("apps/v1")
	o.SetKind("Deployment")
	o.SetNamespace("ns")
	o.SetName("api")
	return o
}

// A server-side diff compares a dry run with the live version it met,
// also when the object changed again between reading it and the second
// dry run (a Deployment's controller writes its status, then its
// revision): it reads it again until both agree.
func TestPredictComparesWithTheVersionTheDryRunMet(t *testing.T) {
	desired := deployment()
	cached := deployment()
	cached.SetResourceVersion("1")
	key := KeyOf(desired)
	live := map[ResourceKey]*unstructured.Unstructured{key: cached}
	// The cache holds 1; the API server moves to 2, then 3 between the
	// first read and the second dry run, then stays.
	lv := movingLive{reads: &versions{rvs: []string{"2", "3"}}}
	dry := dryRun{runner: dryRuns{&versions{rvs: []string{"2", "3", "3"}}}}
	got, err := (&Reconciler{}).predict(t.Context(), lv, dry, true, []*unstructured.Unstructured{desired}, live, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := got[key]
	if p.obj.GetResourceVersion() != "3" || p.liveRV != "3" || live[key].GetResourceVersion() != "3" {
		t.Errorf("dry run at %s, prediction's live %s, compared live %s: want all at 3", p.obj.GetResourceVersion(), p.liveRV, live[key].GetResourceVersion())
	}

	// An object that never settles is read a bounded number of times.
	cached.SetResourceVersion("1")
	live[key] = cached
	reads := &versions{rvs: []string{"10", "11", "12", "13", "14", "15"}}
	dry = dryRun{runner: dryRuns{&versions{rvs: []string{"20", "21", "22", "23", "24", "25"}}}}
	if _, err := (&Reconciler{}).predict(t.Context(), movingLive{reads: reads}, dry, true, []*unstructured.Unstructured{desired}, live, nil); err != nil {
		t.Fatal(err)
	}
	if reads.n != maxLiveRereads {
		t.Errorf("read the live object %d times, want %d", reads.n, maxLiveRereads)
	}
}
