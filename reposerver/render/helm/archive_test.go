package helm

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

func listFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestExtractChart(t *testing.T) {
	chartYAML := reposervertest.TarEntry{Name: "mychart/Chart.yaml", Body: "apiVersion: v2\nname: mychart\nversion: 1.0.0\n"}
	small := DownloadLimits{MaxDecompressedSize: 8 << 20}.WithDefaults()
	tests := []struct {
		Name      string
		entries   []reposervertest.TarEntry
		limits    DownloadLimits
		wantFiles []string
		wantErr   error
		wantMsg   string
	}{
		{
			Name: "chart with templates",
			entries: []reposervertest.TarEntry{
				{Name: "mychart/", Type: tar.TypeDir},
				chartYAML,
				{Name: "mychart/templates/cm.yaml", Body: "kind: ConfigMap\n"},
				{Name: "./mychart/values.yaml", Body: "a: 1\n"},
			},
			wantFiles: []string{"Chart.yaml", "templates/cm.yaml", "values.yaml"},
		},
		{
			Name: "links and devices are not written",
			entries: []reposervertest.TarEntry{
				chartYAML,
				{Name: "mychart/templates/passwd", Type: tar.TypeSymlink, Link: "/etc/passwd"},
				{Name: "mychart/templates/hard", Type: tar.TypeLink, Link: "mychart/Chart.yaml"},
				{Name: "mychart/dev", Type: tar.TypeChar},
			},
			wantFiles: []string{"Chart.yaml"},
		},
		{
			Name:    "entry climbing out",
			entries: []reposervertest.TarEntry{chartYAML, {Name: "mychart/../../evil.yaml", Body: "x"}},
			wantMsg: "leaves the archive's root",
		},
		{
			Name:    "absolute entry",
			entries: []reposervertest.TarEntry{chartYAML, {Name: "mychart//etc/cron.d/x", Body: "x"}},
			wantMsg: "absolute path",
		},
		{
			Name:    "no Chart.yaml",
			entries: []reposervertest.TarEntry{{Name: "mychart/values.yaml", Body: "a: 1\n"}},
			wantMsg: "no Chart.yaml",
		},
		{
			Name:    "Chart.yaml at the top",
			entries: []reposervertest.TarEntry{{Name: "Chart.yaml", Body: "Name: x\n"}},
			wantMsg: "no Chart.yaml in the chart's top directory",
		},
		{
			Name:    "one file too large",
			entries: []reposervertest.TarEntry{chartYAML, {Name: "mychart/big.bin", Size: maxChartFileSize + 1}},
			wantErr: ErrDownloadTooLarge,
		},
		{
			Name: "gzip bomb spread over files",
			entries: []reposervertest.TarEntry{
				chartYAML,
				{Name: "mychart/a.bin", Size: 4 << 20},
				{Name: "mychart/b.bin", Size: 4 << 20},
				{Name: "mychart/c.bin", Size: 4 << 20},
			},
			limits:  small,
			wantErr: ErrDownloadTooLarge,
		},
	}
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "chart")
			lim := tc.limits
			if lim == (DownloadLimits{}) {
				lim = lim.WithDefaults()
			}
			err := extractChart(bytes.NewReader(reposervertest.TarGz(t, tc.entries...)), dest, lim)
			if reposervertest.WantError(t, err, tc.wantErr, tc.wantMsg) {
				return
			}
			if diff := cmp.Diff(listFiles(t, dest), tc.wantFiles); diff != "" {
				t.Errorf("files (-got +want):\n%s", diff)
			}
		})
	}
}

func TestExactVersion(t *testing.T) {
	tests := map[string]bool{
		"1.2.3": true, "v1.2.3": true, "1.2.3-rc.1+build": true,
		"": false, "*": false, "^1.2": false, ">=1.0 <2.0": false, "1.x": false, "~1.2.3": false, "latest": false,
	}
	got := map[string]bool{}
	for v := range tests {
		got[v] = exactVersion(v)
	}
	if diff := cmp.Diff(got, tests); diff != "" {
		t.Errorf("exactVersion (-got +want):\n%s", diff)
	}
}

func TestEscapeSetValue(t *testing.T) {
	tests := map[string]string{
		"plain":   "plain",
		"a,b":     `a\,b`,
		`a\,b`:    `a\,b`,
		"{a,b}":   "{a,b}",
		",lead":   `\,lead`,
		"x,y,z,":  `x\,y\,z\,`,
		"{open,b": `{open\,b`,
	}
	got := map[string]string{}
	for in := range tests {
		got[in] = escapeSetValue(in)
	}
	if diff := cmp.Diff(got, tests); diff != "" {
		t.Errorf("escapeSetValue (-got +want):\n%s", diff)
	}
}
