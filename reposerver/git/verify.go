package git

import (
	"errors"
	"fmt"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// ErrUnsigned is returned when a commit carries no signature.
var ErrUnsigned = errors.New("commit is not signed")

// ErrSignatureInvalid is returned when no given key verifies a signature.
var ErrSignatureInvalid = errors.New("commit signature not verified by any trusted key")

// VerifyCommitSignature checks the OpenPGP signature of commit sha in the
// working copy at dir against armoredKeys (each an ASCII-armored public
// key). It returns the 16-hex ID of the primary key that verified it.
func VerifyCommitSignature(dir, sha string, armoredKeys []string) (keyID string, err error) {
	if !isFullSHA(sha) {
		return "", fmt.Errorf("%w %q: need a 40-hex commit SHA", ErrInvalidRevision, sha)
	}
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		return "", fmt.Errorf("open working copy: %w", err)
	}
	commit, err := repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return "", fmt.Errorf("commit %s: %w", sha, err)
	}
	if commit.PGPSignature == "" {
		return "", fmt.Errorf("commit %s: %w", sha, ErrUnsigned)
	}
	for _, key := range armoredKeys {
		entity, verr := commit.Verify(key)
		if verr == nil && entity != nil && entity.PrimaryKey != nil {
			return entity.PrimaryKey.KeyIdString(), nil
		}
	}
	return "", fmt.Errorf("commit %s: %w", sha, ErrSignatureInvalid)
}
