package project

import (
	"errors"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestCacheCompilesOncePerGeneration(t *testing.T) {
	var c Cache
	p := newProject(v1alpha1.AppProjectSpec{SourceRepos: []string{"https://a/*"}})
	p.UID, p.Generation = "uid-1", 1
	r1, err := c.Rules(p)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := c.Rules(p.DeepCopy())
	if r1 != r2 {
		t.Error("same generation compiled again")
	}

	p.Spec.SourceRepos = []string{"https://b/*"}
	p.Generation = 2
	r3, _ := c.Rules(p)
	if r3 == r1 || r3.SourceAllowed("https://b/x") != nil {
		t.Error("new generation not compiled again")
	}

	// A re-created project (new UID) at the same generation.
	q := p.DeepCopy()
	q.UID, q.Generation = "uid-2", 2
	if r4, _ := c.Rules(q); r4 == r3 {
		t.Error("new UID not compiled again")
	}

	// Invalid projects cache their error.
	p.Spec.SourceRepos = []string{"["}
	p.Generation = 3
	var inv *InvalidError
	if _, err := c.Rules(p); !errors.As(err, &inv) {
		t.Fatalf("Rules(invalid) = %v, want *InvalidError", err)
	}
	if _, err := c.Rules(p); !errors.As(err, &inv) {
		t.Fatalf("cached Rules(invalid) = %v, want *InvalidError", err)
	}

	c.Forget(p.Namespace, p.Name)
	p.Spec.SourceRepos = []string{"*"}
	if r, err := c.Rules(p); err != nil || r.SourceAllowed("https://x") != nil {
		t.Errorf("after Forget: %v", err)
	}

	// Objects not from the API server are compiled every time.
	local := newProject(v1alpha1.AppProjectSpec{})
	a, _ := c.Rules(local)
	b, _ := c.Rules(local)
	if a == b {
		t.Error("generation 0 was cached")
	}
}
