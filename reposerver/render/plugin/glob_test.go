package plugin

import (
	"strings"
	"testing"
)

func TestGlobSegments(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"**/Chart.yaml", "Chart.yaml", true},
		{"**/Chart.yaml", "charts/web/Chart.yaml", true},
		{"**/Chart.yaml", "charts/web/values.yaml", false},
		{"*.cue", "main.cue", true},
		{"*.cue", "sub/main.cue", false},
		{"sub/**", "sub", true},
		{"sub/**", "sub/a/b", true},
		{"a/**/b/*.yaml", "a/b/x.yaml", true},
		{"a/**/b/*.yaml", "a/1/2/b/x.yaml", true},
		{"a/**/b/*.yaml", "a/1/2/c/x.yaml", false},
		{"**", "anything/at/all", true},
		{"[ab]?.txt", "a1.txt", true},
	}
	for _, tt := range tests {
		got := globSegments(strings.Split(tt.pattern, "/"), strings.Split(tt.name, "/"))
		if got != tt.want {
			t.Errorf("globSegments(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestMatchDoubleStar(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"charts/web/Chart.yaml": "name: web",
		"env/prod/env.yaml":     "x: 1",
	})
	tests := []struct {
		pattern string
		want    bool
		wantErr bool
	}{
		{"**/Chart.yaml", true, false},
		{"./**/env.yaml", true, false},
		{"env/*/env.yaml", true, false},
		{"**/kustomization.yaml", false, false},
		{"charts", true, false},
		{"[", false, true},
	}
	for _, tt := range tests {
		got, err := matchDoubleStar(t.Context(), dir, tt.pattern)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("matchDoubleStar(%q) = %v, %v; want %v, error %v", tt.pattern, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestTailWriter(t *testing.T) {
	w := &tailWriter{max: 4}
	for _, s := range []string{"ab", "cdef", "ghij", "k"} {
		_, _ = w.Write([]byte(s))
	}
	if got := w.String(); got != "...hijk" {
		t.Errorf("String() = %q, want %q", got, "...hijk")
	}
	short := &tailWriter{max: 10}
	_, _ = short.Write([]byte("boom"))
	if got := short.String(); got != "boom" {
		t.Errorf("String() = %q, want %q", got, "boom")
	}
}

func TestCapWriter(t *testing.T) {
	killed := 0
	kill := &capWriter{max: 5, kill: true, full: func() { killed++ }}
	if _, err := kill.Write([]byte("12345")); err != nil {
		t.Fatal(err)
	}
	if _, err := kill.Write([]byte("6")); err == nil || killed != 1 || !kill.exceeded {
		t.Errorf("write past the cap: err %v, killed %d, exceeded %v", err, killed, kill.exceeded)
	}
	drop := &capWriter{max: 3}
	for _, s := range []string{"ab", "cd", "ef"} {
		if n, err := drop.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := drop.buf.String(); got != "abc" || drop.exceeded {
		t.Errorf("dropping writer kept %q (exceeded %v), want %q", got, drop.exceeded, "abc")
	}
}
