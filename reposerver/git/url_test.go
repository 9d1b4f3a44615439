package git

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseURLRefused(t *testing.T) {
	tests := []struct {
		name, url string
		allowFile bool
	}{
		{"empty", "", false},
		{"ext transport", "ext::sh -c touch% /tmp/pwned", false},
		{"fd transport", "fd::3", false},
		{"leading dash", "-oProxyCommand=touch /tmp/x", false},
		{"upload-pack option", "https://example.com/repo.git --upload-pack=touch", false},
		{"upload-pack in path", "https://example.com/--upload-pack=x/repo.git", false},
		{"ssh proxy command host", "ssh://-oProxyCommand=touch%20x/repo", false},
		{"scp proxy command", "-oProxyCommand=x@host:repo", false},
		{"scp dash user", "-x@host:repo", false},
		{"file scheme", "file:///srv/repo.git", false},
		{"absolute path", "/srv/repo.git", false},
		{"relative path", "./repo", false},
		{"bare word", "repo", false},
		{"git scheme", "git://example.com/repo.git", false},
		{"ftp scheme", "ftp://example.com/repo.git", false},
		{"newline", "https://example.com/repo.git\n--upload-pack=x", false},
		{"nul", "https://example.com/re\x00po.git", false},
		{"ssh password", "ssh://git:pw@example.com/repo.git", false},
		{"file with host", "file://evil.example.com/repo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseURL(tt.url, tt.allowFile)
			if !errors.Is(err, ErrUnsafeURL) {
				t.Fatalf("parseURL(%q) error = %v, want ErrUnsafeURL", tt.url, err)
			}
		})
	}
}

func TestParseURLAccepted(t *testing.T) {
	type result struct {
		Kind                 urlKind
		FetchURL, Normalized string
		Host, User, Password string
	}
	tests := []struct {
		name, url string
		allowFile bool
		want      result
	}{
		{"https", "https://GitHub.com/Org/App.git", false, result{kindHTTP, "https://github.com/Org/App.git", "https://github.com/org/app", "github.com", "", ""}},
		{"https trailing slash", "https://github.com/org/app/", false, result{kindHTTP, "https://github.com/org/app/", "https://github.com/org/app", "github.com", "", ""}},
		{"http creds stripped", "http://alice:pw@example.com:8080/app.git", false, result{kindHTTP, "http://example.com:8080/app.git", "http://example.com:8080/app", "example.com:8080", "alice", "pw"}},
		{"ssh", "ssh://git@example.com:2222/org/app.git", false, result{kindSSH, "ssh://git@example.com:2222/org/app.git", "ssh://git@example.com:2222/org/app", "example.com:2222", "git", ""}},
		{"scp", "git@github.com:org/app.git", false, result{kindSSH, "git@github.com:org/app.git", "ssh://git@github.com/org/app", "github.com", "git", ""}},
		{"file allowed", "file:///srv/repo.git", true, result{kindFile, "file:///srv/repo.git", "file:///srv/repo", "", "", ""}},
		{"path allowed", "/srv/repo", true, result{kindFile, "file:///srv/repo", "file:///srv/repo", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep, err := parseURL(tt.url, tt.allowFile)
			if err != nil {
				t.Fatal(err)
			}
			got := result{ep.kind, ep.fetchURL, ep.normalized, ep.host, ep.user, ep.password}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("parseURL(%q) (-got +want):\n%s", tt.url, diff)
			}
		})
	}
}

func TestValidateRevision(t *testing.T) {
	tests := []struct {
		rev string
		ok  bool
	}{
		{"", true},
		{"HEAD", true},
		{"main", true},
		{"release/1.x", true},
		{">=1.2.0 <2.0.0", true},
		{"refs/pull/1/head", true},
		{"--upload-pack=touch /tmp/x", false},
		{"-oProxyCommand=x", false},
		{"main\n--upload-pack", false},
		{"main..feature", false},
		{"main@{1}", false},
	}
	for _, tt := range tests {
		err := validateRevision(tt.rev)
		if (err == nil) != tt.ok {
			t.Errorf("validateRevision(%q) = %v, want ok=%v", tt.rev, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidRevision) {
			t.Errorf("validateRevision(%q) = %v, want ErrInvalidRevision", tt.rev, err)
		}
	}
}
