package git

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func sha(c byte) string { return strings.Repeat(string(c), 40) }

func testRefs() []*plumbing.Reference {
	return []*plumbing.Reference{
		plumbing.NewSymbolicReference("HEAD", "refs/heads/main"),
		plumbing.NewReferenceFromStrings("refs/heads/main", sha('a')),
		plumbing.NewReferenceFromStrings("refs/heads/feature", sha('b')),
		plumbing.NewReferenceFromStrings("refs/tags/v1.0.0", sha('1')),    // annotated: tag object
		plumbing.NewReferenceFromStrings("refs/tags/v1.0.0^{}", sha('c')), // peeled commit
		plumbing.NewReferenceFromStrings("refs/tags/v1.2.3", sha('d')),
		plumbing.NewReferenceFromStrings("refs/tags/v2.0.0", sha('e')),
		plumbing.NewReferenceFromStrings("refs/tags/v2.1.0-rc.1", sha('f')),
		plumbing.NewReferenceFromStrings("refs/tags/not-semver", sha('2')),
		plumbing.NewReferenceFromStrings("refs/pull/7/head", sha('9')),
	}
}

func TestResolveFromRefs(t *testing.T) {
	tests := []struct {
		rev     string
		want    string
		ok      bool
		wantErr error
	}{
		{rev: "", want: sha('a'), ok: true},
		{rev: "HEAD", want: sha('a'), ok: true},
		{rev: "main", want: sha('a'), ok: true},
		{rev: "feature", want: sha('b'), ok: true},
		{rev: "v1.0.0", want: sha('c'), ok: true},
		{rev: "refs/tags/v1.0.0", want: sha('c'), ok: true},
		{rev: "refs/heads/feature", want: sha('b'), ok: true},
		{rev: "refs/pull/7/head", want: sha('9'), ok: true},
		{rev: ">=1.2.0 <2.0.0", want: sha('d'), ok: true},
		{rev: "1.2.*", want: sha('d'), ok: true},
		{rev: "^1.2", want: sha('d'), ok: true},
		{rev: "~1.0", want: sha('c'), ok: true},
		{rev: ">=2.0.0", want: sha('e'), ok: true},
		{rev: ">=2.1.0-0", want: sha('f'), ok: true},
		{rev: "*", want: sha('e'), ok: true},
		{rev: "1.2.3", want: sha('d'), ok: true},
		{rev: "bbbbbbb", want: sha('b'), ok: true},
		{rev: "1234abcd", ok: false},
		{rev: ">=9", wantErr: ErrRevisionNotFound},
		{rev: "refs/heads/nope", wantErr: ErrRevisionNotFound},
		{rev: "no-such-branch", wantErr: ErrRevisionNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.rev, func(t *testing.T) {
			got, ok, err := resolveFromRefs(testRefs(), tt.rev)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.ok {
				t.Errorf("resolveFromRefs(%q) = %q, %v; want %q, %v", tt.rev, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestResolveFromRefsAmbiguousShortSHA(t *testing.T) {
	refs := []*plumbing.Reference{
		plumbing.NewReferenceFromStrings("refs/heads/x", "abcd"+strings.Repeat("1", 36)),
		plumbing.NewReferenceFromStrings("refs/heads/y", "abcd"+strings.Repeat("2", 36)),
	}
	if _, _, err := resolveFromRefs(refs, "abcd"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("err = %v, want ambiguous", err)
	}
}
