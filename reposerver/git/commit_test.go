package git

import (
	"errors"
	"os/exec"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
)

func TestValidateCommitDir(t *testing.T) {
	for _, tc := range []struct {
		dir string
		ok  bool
	}{
		{"apps/guestbook", true},
		{"env/prod", true},
		{"a.b/c-d_e", true},
		{"", false},
		{".", false},
		{"/", false},
		{"/abs", false},
		{"../x", false},
		{"a/../b", false},
		{"a/..", false},
		{".git", false},
		{"a/.GIT/hooks", false},
		{"./a", false},
		{"a/./b", false},
		{"a//b", false},
		{"a/", false},
		{`a\b`, false},
		{"C:/x", false},
		{"a\nb", false},
	} {
		err := ValidateCommitDir(tc.dir)
		if tc.ok && err != nil {
			t.Errorf("ValidateCommitDir(%q) = %v, want ok", tc.dir, err)
		}
		if !tc.ok && !errors.Is(err, ErrInvalidPath) {
			t.Errorf("ValidateCommitDir(%q) = %v, want ErrInvalidPath", tc.dir, err)
		}
	}
}

func TestBranchRef(t *testing.T) {
	for _, tc := range []struct {
		branch string
		want   plumbing.ReferenceName
	}{
		{"environments/prod", "refs/heads/environments/prod"},
		{"refs/heads/main", "refs/heads/main"},
		{"main", "refs/heads/main"},
		{"", ""},
		{"HEAD", ""},
		{"a..b", ""},
		{"has space", ""},
		{"-delete", ""},
		{"refs/heads/-x", ""},
		{"a~1", ""},
		{"x@{1}", ""},
		{"a:b", ""},
		{"ends.lock", ""},
		{"trailing/", ""},
		{"a//b", ""},
		{".hidden", ""},
		{"tab\tx", ""},
	} {
		got, err := BranchRef(tc.branch)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("BranchRef(%q) = %q, %v, want %q", tc.branch, got, err, tc.want)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidBranch) {
			t.Errorf("BranchRef(%q) = %q, %v, want ErrInvalidBranch", tc.branch, got, err)
		}
	}
}

// CommitFiles starts a missing branch as an orphan, replaces only its
// directory, keeps the rest of the tree, and makes no commit when the
// directory already holds the files.
func TestCommitFiles(t *testing.T) {
	bare := t.TempDir()
	if _, err := gogit.PlainInit(bare, true); err != nil {
		t.Fatal(err)
	}
	c := New(Options{WorkDir: t.TempDir(), AllowFileURLs: true})
	commit := func(dir string, files map[string]string) CommitResult {
		t.Helper()
		req := CommitRequest{RepoURL: bare, Branch: "hydrated", Dir: dir, Files: map[string][]byte{}, Message: "test"}
		for k, v := range files {
			req.Files[k] = []byte(v)
		}
		res, err := c.CommitFiles(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	first := commit("apps/one", map[string]string{"manifest.yaml": "a: 1\n", "old.txt": "gone soon"})
	if !first.Pushed {
		t.Fatal("first commit not pushed")
	}
	second := commit("apps/two", map[string]string{"manifest.yaml": "b: 2\n"})
	third := commit("apps/one", map[string]string{"manifest.yaml": "a: 3\n"})
	if !second.Pushed || !third.Pushed || third.SHA == second.SHA {
		t.Fatalf("commits: %+v %+v, want two new pushed commits", second, third)
	}
	again := commit("apps/one", map[string]string{"manifest.yaml": "a: 3\n"})
	if again.Pushed || again.SHA != third.SHA {
		t.Errorf("unchanged files gave %+v, want no push and head %s", again, third.SHA)
	}

	repo, err := gogit.PlainOpen(bare)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := repo.Reference("refs/heads/hydrated", true)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Hash().String() != third.SHA {
		t.Errorf("branch at %s, want %s", ref.Hash(), third.SHA)
	}
	head, err := repo.CommitObject(ref.Hash())
	if err != nil {
		t.Fatal(err)
	}
	if head.Author.Name != "graphcd" || head.NumParents() != 1 {
		t.Errorf("head author %q with %d parents, want graphcd with 1", head.Author.Name, head.NumParents())
	}
	files := map[string]string{}
	iter, err := head.Files()
	if err != nil {
		t.Fatal(err)
	}
	_ = iter.ForEach(func(f *object.File) error {
		s, err := f.Contents()
		files[f.Name] = s
		return err
	})
	want := map[string]string{"apps/one/manifest.yaml": "a: 3\n", "apps/two/manifest.yaml": "b: 2\n"}
	if diff := cmp.Diff(files, want); diff != "" {
		t.Errorf("tree (-got +want):\n%s", diff)
	}
	// The history is the three commits, the first an orphan.
	var n int
	for cm := head; ; n++ {
		if cm.NumParents() == 0 {
			if cm.Hash.String() != first.SHA {
				t.Errorf("root commit %s, want %s", cm.Hash, first.SHA)
			}
			break
		}
		if cm, err = cm.Parent(0); err != nil {
			t.Fatal(err)
		}
	}
	if n != 2 {
		t.Errorf("history has %d commits, want 3", n+1)
	}

	// The objects are what git itself would write.
	if gitBin, err := exec.LookPath("git"); err == nil {
		if out, err := exec.CommandContext(t.Context(), gitBin, "-C", bare, "fsck", "--strict").CombinedOutput(); err != nil {
			t.Errorf("git fsck: %v\n%s", err, out)
		}
	}

	for _, bad := range []CommitRequest{
		{RepoURL: bare, Branch: "hydrated", Dir: "../x"},
		{RepoURL: bare, Branch: "hydrated", Dir: "."},
		{RepoURL: bare, Branch: "a..b", Dir: "x"},
		{RepoURL: bare, Branch: "hydrated", Dir: "x", Files: map[string][]byte{"../escape": nil}},
		{RepoURL: bare, Branch: "hydrated", Dir: "x", Files: map[string][]byte{".git": nil}},
	} {
		if _, err := c.CommitFiles(t.Context(), bad); !errors.Is(err, ErrInvalidPath) && !errors.Is(err, ErrInvalidBranch) {
			t.Errorf("CommitFiles(%+v) = %v, want a refusal", bad, err)
		}
	}
}
