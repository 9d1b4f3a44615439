package git

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"
)

func TestBounded(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"cut here", 3, "cut"},
		{"ééé", 3, "é"}, // never half a rune
		{"bad\xffbyte", 20, "bad\uFFFDbyte"},
	}
	for _, tt := range tests {
		got := bounded(tt.in, tt.n)
		if got != tt.want || !utf8.ValidString(got) || len(got) > tt.n {
			t.Errorf("bounded(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCommitSubject(t *testing.T) {
	for msg, want := range map[string]string{
		"fix: thing\n\nbody\n": "fix: thing",
		"one line":             "one line",
		"":                     "",
		"  padded  \nrest":     "padded",
	} {
		if got := (Commit{Message: msg}).Subject(); got != want {
			t.Errorf("Subject(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestTagsByCommit(t *testing.T) {
	a, b, tagObj := plumbing.NewHash(sha('a')), plumbing.NewHash(sha('b')), plumbing.NewHash(sha('c'))
	refs := []*plumbing.Reference{
		plumbing.NewHashReference("refs/heads/main", a),
		plumbing.NewHashReference("refs/tags/v2", a),
		plumbing.NewHashReference("refs/tags/v1", a),
		plumbing.NewHashReference("refs/tags/annotated", tagObj),
		plumbing.NewHashReference("refs/tags/annotated^{}", b),
	}
	for i := range 30 {
		refs = append(refs, plumbing.NewHashReference(plumbing.ReferenceName("refs/tags/many-"+strings.Repeat("x", i)), b))
	}
	got := tagsByCommit(refs)
	if diff := cmp.Diff(got[a], []string{"v1", "v2"}); diff != "" {
		t.Errorf("tags of a (-got +want):\n%s", diff)
	}
	if len(got[b]) != maxTagsPerCommit || got[b][0] != "annotated" {
		t.Errorf("tags of b = %v, want %d tags starting with the peeled annotated tag", got[b], maxTagsPerCommit)
	}
	if _, ok := got[tagObj]; ok {
		t.Error("an annotated tag was listed under its tag object, not its commit")
	}
}
