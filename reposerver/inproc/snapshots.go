package inproc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sync/singleflight"

	"github.com/graphcd/graphcd/reposerver/render"
)

// Limits of one snapshot: what a copied repository may hold.
const (
	maxSnapshotFiles = 20000
	maxSnapshotBytes = 256 << 20
	// maxSnapshots is how many snapshots are kept; the least recently
	// used one not in use goes first.
	maxSnapshots = 64
)

// snapshots are read-only copies of repositories at a commit (without
// .git), one per repository and commit however many renders use it:
// remote bases are read from them while their working copies are free
// for other renders. A render holds the snapshots it reads until it
// releases them.
type snapshots struct {
	dir     string
	flights singleflight.Group

	mu    sync.Mutex
	clock uint64
	byKey map[string]*snapshot
}

type snapshot struct {
	dir      string
	users    int
	lastUsed uint64
}

func newSnapshots(dir string) *snapshots {
	return &snapshots{dir: dir, byKey: map[string]*snapshot{}}
}

// get returns the snapshot of repoURL at sha, made by fill (which copies
// a checkout into the directory it is given) when there is none yet;
// concurrent callers share one fill. release lets it go.
func (s *snapshots) get(ctx context.Context, repoURL, sha string, fill func(ctx context.Context, dst string) error) (string, func(), error) {
	sum := sha256.Sum256([]byte(repoURL + "\x00" + sha))
	key := hex.EncodeToString(sum[:16])
	if dir, release, ok := s.use(key); ok {
		return dir, release, nil
	}
	_, err, _ := s.flights.Do(key, func() (any, error) {
		if _, release, ok := s.use(key); ok {
			release()
			return nil, nil
		}
		dst := filepath.Join(s.dir, key)
		_ = os.RemoveAll(dst)
		if err := fill(ctx, dst); err != nil {
			_ = os.RemoveAll(dst)
			return nil, err
		}
		s.mu.Lock()
		s.byKey[key] = &snapshot{dir: dst}
		s.mu.Unlock()
		return nil, nil
	})
	if err != nil {
		return "", nil, err
	}
	if dir, release, ok := s.use(key); ok {
		s.evict()
		return dir, release, nil
	}
	return "", nil, errors.New("snapshot evicted before use")
}

// use takes a user of the snapshot key, if there is one.
func (s *snapshots) use(key string) (string, func(), bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.byKey[key]
	if !ok {
		return "", nil, false
	}
	snap.users++
	s.clock++
	snap.lastUsed = s.clock
	var once sync.Once
	return snap.dir, func() {
		once.Do(func() {
			s.mu.Lock()
			snap.users--
			s.mu.Unlock()
		})
	}, true
}

// evict removes the least recently used snapshots nobody uses while
// there are more than maxSnapshots.
func (s *snapshots) evict() {
	s.mu.Lock()
	var gone []string
	for len(s.byKey) > maxSnapshots {
		oldest := ""
		for k, snap := range s.byKey {
			if snap.users == 0 && (oldest == "" || snap.lastUsed < s.byKey[oldest].lastUsed) {
				oldest = k
			}
		}
		if oldest == "" {
			break
		}
		gone = append(gone, s.byKey[oldest].dir)
		delete(s.byKey, oldest)
	}
	s.mu.Unlock()
	for _, dir := range gone {
		_ = os.RemoveAll(dir)
	}
}

// copyTree copies the files, directories and symlinks of the checkout
// src into dst, leaving out .git, within maxSnapshotFiles and
// maxSnapshotBytes. Both sides are opened as roots, so nothing outside
// them is read or written; symlinks are copied as they are, and readers
// confine them to dst.
func copyTree(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	from, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer func() { _ = from.Close() }()
	to, err := os.OpenRoot(dst)
	if err != nil {
		return err
	}
	defer func() { _ = to.Close() }()
	files, size := 0, int64(0)
	return fs.WalkDir(from.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if files++; files > maxSnapshotFiles {
			return fmt.Errorf("the repository has more than %d files: %w", maxSnapshotFiles, render.ErrTooLarge)
		}
		switch {
		case d.IsDir():
			return to.Mkdir(p, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := from.Readlink(p)
			if err != nil {
				return err
			}
			return to.Symlink(link, p)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			if size += info.Size(); size > maxSnapshotBytes {
				return fmt.Errorf("the repository holds more than %d bytes: %w", maxSnapshotBytes, render.ErrTooLarge)
			}
			return copyFile(from, to, p)
		}
		return nil // sockets, devices: nothing a render reads
	})
}

func copyFile(from, to *os.Root, name string) error {
	in, err := from.Open(name)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := to.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
