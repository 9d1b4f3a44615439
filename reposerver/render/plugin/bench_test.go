package plugin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkRepoTarRoundTrip measures streaming a 500-file repository and
// unpacking it, what every plugin call pays before its commands run.
func BenchmarkRepoTarRoundTrip(b *testing.B) {
	repo := b.TempDir()
	body := strings.Repeat("key: value\n", 200)
	for i := range 500 {
		p := filepath.Join(repo, fmt.Sprintf("apps/app%02d/file%03d.yaml", i%25, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	parent := b.TempDir()
	limits := extractLimits{maxBytes: DefaultMaxRepoSize, maxEntries: DefaultMaxRepoFiles}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := writeRepoTar(b.Context(), &buf, repo); err != nil {
			b.Fatal(err)
		}
		dest, err := os.MkdirTemp(parent, "x")
		if err != nil {
			b.Fatal(err)
		}
		if err := extractRepoTar(b.Context(), &buf, dest, limits); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dest); err != nil {
			b.Fatal(err)
		}
	}
}
