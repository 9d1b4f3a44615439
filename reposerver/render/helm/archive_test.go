package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type tarEntry struct {
	name     string
	body     string
	size     int64 // zeros to write instead of body when > 0
	typeflag byte
	link     string
}

// tarGz builds a gzipped tar archive from entries.
func tarGz(t testing.TB, entries []tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	zeros := make([]byte, 1<<20)
	for _, e := range entries {
		hd := &tar.Header{Name: e.name, Mode: 0o644, Typeflag: e.typeflag, Linkname: e.link}
		if hd.Typeflag == 0 {
			hd.Typeflag = tar.TypeReg
		}
		if hd.Typeflag == tar.TypeReg {
			hd.Size = int64(len(e.body))
			if e.size > 0 {
				hd.Size = e.size
			}
		}
		if err := tw.WriteHeader(hd); err != nil {
			t.Fatal(err)
		}
		if hd.Typeflag != tar.TypeReg {
			continue
		}
		if e.size == 0 {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for left := e.size; left > 0; {
			n := min(left, int64(len(zeros)))
			if _, err := tw.Write(zeros[:n]); err != nil {
				t.Fatal(err)
			}
			left -= n
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

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
	chartYAML := tarEntry{name: "mychart/Chart.yaml", body: "apiVersion: v2\nname: mychart\nversion: 1.0.0\n"}
	small := DownloadLimits{MaxDecompressedSize: 8 << 20}.WithDefaults()
	tests := []struct {
		name      string
		entries   []tarEntry
		limits    DownloadLimits
		wantFiles []string
		wantErr   error
		wantMsg   string
	}{
		{
			name: "chart with templates",
			entries: []tarEntry{
				{name: "mychart/", typeflag: tar.TypeDir},
				chartYAML,
				{name: "mychart/templates/cm.yaml", body: "kind: ConfigMap\n"},
				{name: "./mychart/values.yaml", body: "a: 1\n"},
			},
			wantFiles: []string{"Chart.yaml", "templates/cm.yaml", "values.yaml"},
		},
		{
			name: "links and devices are not written",
			entries: []tarEntry{
				chartYAML,
				{name: "mychart/templates/passwd", typeflag: tar.TypeSymlink, link: "/etc/passwd"},
				{name: "mychart/templates/hard", typeflag: tar.TypeLink, link: "mychart/Chart.yaml"},
				{name: "mychart/dev", typeflag: tar.TypeChar},
			},
			wantFiles: []string{"Chart.yaml"},
		},
		{
			name:    "entry climbing out",
			entries: []tarEntry{chartYAML, {name: "mychart/../../evil.yaml", body: "x"}},
			wantMsg: "leaves the archive's root",
		},
		{
			name:    "absolute entry",
			entries: []tarEntry{chartYAML, {name: "mychart//etc/cron.d/x", body: "x"}},
			wantMsg: "absolute path",
		},
		{
			name:    "no Chart.yaml",
			entries: []tarEntry{{name: "mychart/values.yaml", body: "a: 1\n"}},
			wantMsg: "no Chart.yaml",
		},
		{
			name:    "Chart.yaml at the top",
			entries: []tarEntry{{name: "Chart.yaml", body: "name: x\n"}},
			wantMsg: "no Chart.yaml in the chart's top directory",
		},
		{
			name:    "one file too large",
			entries: []tarEntry{chartYAML, {name: "mychart/big.bin", size: maxChartFileSize + 1}},
			wantErr: ErrDownloadTooLarge,
		},
		{
			name: "gzip bomb spread over files",
			entries: []tarEntry{
				chartYAML,
				{name: "mychart/a.bin", size: 4 << 20},
				{name: "mychart/b.bin", size: 4 << 20},
				{name: "mychart/c.bin", size: 4 << 20},
			},
			limits:  small,
			wantErr: ErrDownloadTooLarge,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "chart")
			lim := tc.limits
			if lim == (DownloadLimits{}) {
				lim = lim.WithDefaults()
			}
			err := extractChart(bytes.NewReader(tarGz(t, tc.entries)), dest, lim)
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
			case tc.wantMsg != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantMsg)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(listFiles(t, dest), tc.wantFiles); diff != "" {
					t.Errorf("files (-got +want):\n%s", diff)
				}
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
