// Package gittree finds what the git generators of an ApplicationSet read
// in a repository: the directories, or the files and their contents, that
// path globs match. The repository server runs it on its checkouts, and
// `graphcd admin appset generate` on local ones, so both match alike.
//
// A generator is a tenant's input and a repository may be anything, so
// Match is bounded: MaxEntries entries walked, MaxFiles files of at most
// MaxFile bytes and MaxTotal bytes in all read, globs matched in time
// linear in the pattern and the path whatever their "**". Only regular
// files are read; the caller confines fsys to the checkout (os.Root).
package gittree

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Bounds of one Match.
const (
	// MaxEntries bounds the entries of a repository Match walks.
	MaxEntries = 100000
	// MaxFiles bounds the files one request reads.
	MaxFiles = 10000
	// MaxFile bounds one file.
	MaxFile = 1 << 20
	// MaxTotal bounds the files of one request together.
	MaxTotal = 32 << 20
)

// Item is a path glob ("apps/*", "clusters/**/config.json"); an Exclude
// item removes the paths it matches.
type Item struct {
	Path    string `json:"path"`
	Exclude bool   `json:"exclude,omitempty"`
}

// Request says what to match: directories, or regular files (Files)
// with their contents.
type Request struct {
	Files bool   `json:"files,omitempty"`
	Items []Item `json:"items"`
}

// Result is what matched, in lexical order.
type Result struct {
	// Revision is the commit matched (set by the caller).
	Revision string   `json:"revision"`
	Paths    []string `json:"paths"`
	// Contents holds the file at each of Paths, for a Files request.
	Contents [][]byte `json:"contents,omitempty"`
}

// Match walks fsys (but .git) and returns the directories, or the regular
// files with their contents, that an including item matches and no
// excluding one does.
func Match(fsys fs.FS, req Request) (*Result, error) {
	res := &Result{}
	entries, total := 0, 0
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
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
		if entries++; entries > MaxEntries {
			return fmt.Errorf("more than %d entries in the repository", MaxEntries)
		}
		if req.Files {
			if d.IsDir() || !d.Type().IsRegular() || !matchItems(p, req.Items) {
				return nil
			}
			if len(res.Paths) == MaxFiles {
				return fmt.Errorf("more than %d matching files", MaxFiles)
			}
			data, err := readFile(fsys, p)
			if err != nil {
				return err
			}
			if total += len(data); total > MaxTotal {
				return fmt.Errorf("the matching files hold more than %d bytes", MaxTotal)
			}
			res.Paths, res.Contents = append(res.Paths, p), append(res.Contents, data)
			return nil
		}
		if d.IsDir() && matchItems(p, req.Items) {
			res.Paths = append(res.Paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func readFile(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFile {
		return nil, fmt.Errorf("%s: more than %d bytes", p, MaxFile)
	}
	return data, nil
}

// matchItems reports whether p matches an including item and no
// excluding one.
func matchItems(p string, items []Item) bool {
	included := slices.ContainsFunc(items, func(it Item) bool { return !it.Exclude && MatchGlob(it.Path, p) })
	return included && !slices.ContainsFunc(items, func(it Item) bool { return it.Exclude && MatchGlob(it.Path, p) })
}

// MatchGlob matches a slash-separated path against a glob whose "**"
// element matches any number of elements and whose other elements are
// path.Match patterns.
func MatchGlob(pattern, p string) bool {
	return matchParts(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(p, "/"))
}

func matchParts(pat, parts []string) bool {
	// match[i][j]: pat[i:] matches parts[j:]; filled from the end, so
	// any number of "**" costs len(pat) × len(parts) steps.
	match := make([][]bool, len(pat)+1)
	for i := range match {
		match[i] = make([]bool, len(parts)+1)
	}
	match[len(pat)][len(parts)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		for j := len(parts); j >= 0; j-- {
			if pat[i] == "**" {
				match[i][j] = match[i+1][j] || (j < len(parts) && match[i][j+1])
				continue
			}
			if j < len(parts) {
				ok, err := path.Match(pat[i], parts[j])
				match[i][j] = err == nil && ok && match[i+1][j+1]
			}
		}
	}
	return match[0][0]
}
