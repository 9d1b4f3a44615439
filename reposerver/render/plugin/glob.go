package plugin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// errFound stops a walk at the first match.
var errFound = errors.New("found")

// matchDoubleStar reports whether a file or directory below dir matches
// pattern, a slash-separated path.Match pattern relative to dir in which a
// "**" segment matches any number of directories (zero included).
// Symlinked directories are not descended into.
func matchDoubleStar(ctx context.Context, dir, pattern string) (bool, error) {
	pattern = strings.TrimPrefix(path.Clean(filepath.ToSlash(pattern)), "./")
	segs := strings.Split(pattern, "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return false, fmt.Errorf("glob %q: %w", pattern, err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, walkErr error) error { //nolint:gosec // dir is the call's own directory
		if walkErr != nil {
			return nil //nolint:nilerr // unreadable parts cannot match
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, relErr := filepath.Rel(dir, p)
		if relErr != nil {
			return relErr
		}
		if globSegments(segs, strings.Split(filepath.ToSlash(rel), "/")) {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// globSegments matches name segments against pattern segments.
func globSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(name); i++ {
				if globSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
