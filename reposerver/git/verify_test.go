package git

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func newKey(t *testing.T, name string) (*openpgp.Entity, string) {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", name+"@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return e, buf.String()
}

// commitRepo makes a repository with one commit, signed when key is set.
func commitRepo(t *testing.T, key *openpgp.Entity) (dir, sha string) {
	t.Helper()
	dir = t.TempDir()
	repo, err := gogit.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add("a.yaml"); err != nil {
		t.Fatal(err)
	}
	h, err := wt.Commit("add a", &gogit.CommitOptions{
		Author:  &object.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1700000000, 0)},
		SignKey: key,
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, h.String()
}

func TestVerifyCommitSignature(t *testing.T) {
	signer, signerPub := newKey(t, "signer")
	_, otherPub := newKey(t, "other")
	signedDir, signedSHA := commitRepo(t, signer)
	unsignedDir, unsignedSHA := commitRepo(t, nil)

	id, err := VerifyCommitSignature(signedDir, signedSHA, []string{otherPub, signerPub})
	if err != nil {
		t.Fatal(err)
	}
	if want := signer.PrimaryKey.KeyIdString(); id != want {
		t.Errorf("key id = %q, want %q", id, want)
	}
	if _, err := VerifyCommitSignature(signedDir, signedSHA, []string{otherPub}); !errors.Is(err, ErrSignatureInvalid) {
		t.Errorf("untrusted key: err = %v, want ErrSignatureInvalid", err)
	}
	if _, err := VerifyCommitSignature(unsignedDir, unsignedSHA, []string{signerPub}); !errors.Is(err, ErrUnsigned) {
		t.Errorf("unsigned: err = %v, want ErrUnsigned", err)
	}
	if _, err := VerifyCommitSignature(signedDir, "HEAD", []string{signerPub}); !errors.Is(err, ErrInvalidRevision) {
		t.Errorf("non-SHA: err = %v, want ErrInvalidRevision", err)
	}
}
