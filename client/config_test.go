package client

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestConfigSaveLoad(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	path, err := ConfigPath()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := LoadConfig(path); err != nil || len(got.Contexts) != 0 {
		t.Fatalf("a missing file = %+v, %v; want an empty configuration", got, err)
	}
	exp := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	c := &Config{}
	c.Put(Context{Name: "a", Server: "https://a.example.com", User: "admin", Token: "t1", ExpiresAt: &exp})
	c.Put(Context{Name: "b", Server: "http://127.0.0.1:8080", Token: "t2"})
	c.Put(Context{Name: "a", Server: "https://a.example.com", User: "alice", Token: "t3"})
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %o, want %o", p, got, want)
		}
	}
	got, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{CurrentContext: "a", Contexts: []Context{
		{Name: "a", Server: "https://a.example.com", User: "alice", Token: "t3"},
		{Name: "b", Server: "http://127.0.0.1:8080", Token: "t2"},
	}}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("loaded configuration (-got +want):\n%s", d)
	}
	got.Remove("a")
	if got.Current() != nil || got.Context("b") == nil || len(got.Contexts) != 1 {
		t.Errorf("after removing the current context: %+v", got)
	}
}

func TestWebsocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://cd.example.com": "wss://cd.example.com/api/graphql",
		"http://127.0.0.1:8080":  "ws://127.0.0.1:8080/api/graphql",
		"https://example.com/cd": "wss://example.com/cd/api/graphql",
	} {
		if got, err := websocketURL(in); err != nil || got != want {
			t.Errorf("websocketURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := websocketURL("ftp://x"); err == nil {
		t.Error("websocketURL accepted ftp://")
	}
}
