package repourl

import "testing"

// Before this package, four normalisers (reposerver/git's NormalizeURL for
// caches and credentials, controller/project's for sourceRepos, the
// webhook's, the application index's) disagreed at the edges; before says
// which of them answered otherwise than same does now.
func TestSame(t *testing.T) {
	tests := []struct {
		a, b   string
		same   bool
		before string
	}{
		{"https://github.com/org/repo", "https://github.com/org/repo.git", true, ""},
		{"https://github.com/org/repo", "https://github.com/org/repo/", true, ""},
		{"https://github.com/org/repo", "https://github.com/org/repo.git/", true, ""},
		{"https://github.com/org/repo", "  https://github.com/org/repo  ", true, ""},
		{"https://github.com/org/repo", "https://GitHub.com/org/repo", true, ""},
		{"https://github.com/org/repo", "https://github.com/Org/Repo", true, "git: path case counted"},
		{"https://github.com/org/repo", "https://user:pass@github.com/org/repo", true, "project, appindex: user information counted"},
		{"https://github.com/org/repo", "https://token@github.com/org/repo", true, "project, appindex: user information counted"},
		{"https://github.com/org/repo", "https://github.com:443/org/repo", true, "git, project, appindex: default port counted"},
		{"http://github.com/org/repo", "http://github.com:80/org/repo", true, "git, project, appindex: default port counted"},
		{"https://github.com/org/repo", "https://github.com:8443/org/repo", false, "webhook: ports ignored"},
		{"https://github.com/org/repo", "http://github.com/org/repo", false, "webhook: scheme ignored"},
		{"https://github.com/org/repo", "https://github.com/org/repo?ref=main", false, "git: query ignored"},
		{"https://github.com/org/repo.git?ref=main", "https://github.com/org/repo?ref=main", true, "git: query ignored"},
		{"https://github.com/org/repo", "https://github.com/org/repo#main", true, "project, appindex: fragment counted"},
		{"https://github.com/org/repo", "https://github.com/org/x/../repo", true, "project, appindex, webhook: dot segments counted"},
		{"git@github.com:org/repo.git", "ssh://git@github.com/org/repo", true, "appindex: scp-like differs"},
		{"git@GitHub.com:Org/Repo.git", "ssh://git@github.com/org/repo", true, "git: path case counted; appindex: scp-like differs"},
		{"ssh://git@github.com/org/repo", "ssh://git@github.com:22/org/repo", true, "git, project, appindex: default port counted"},
		{"ssh://git@github.com/org/repo", "git+ssh://git@github.com/org/repo", true, "project, appindex: git+ssh differs"},
		{"ssh://git@github.com/org/repo", "ssh://github.com/org/repo", false, "webhook: user ignored"},
		{"ssh://git@github.com/org/repo", "https://github.com/org/repo", false, "webhook: scheme ignored"},
		{"ssh://git@github.com:2222/org/repo", "ssh://git@github.com/org/repo", false, "webhook: ports ignored"},
		{"https://gitlab.com/group/sub/repo", "https://gitlab.com/group/sub/repo.git", true, ""},
		{"https://gitlab.com/group/sub/repo", "https://gitlab.com/group/repo", false, ""},
		{"https://org@dev.azure.com/org/project/_git/repo", "https://dev.azure.com/org/project/_git/repo", true, "project, appindex: user information counted"},
		{"git://github.com/org/repo.git", "git://github.com/org/repo", true, "git: git:// not normalised"},
		{"oci://registry.example.com/charts/x/", "oci://Registry.example.com/charts/x", true, "git: oci:// not normalised"},
		{"file:///srv/git/repo.git", "file:///srv/git/repo", true, ""},
		{"", "", false, ""},
	}
	for _, tt := range tests {
		if got := Same(tt.a, tt.b); got != tt.same {
			t.Errorf("Same(%q, %q) = %v, want %v (before: %s)", tt.a, tt.b, got, tt.same, tt.before)
		}
		if got := Same(tt.b, tt.a); got != tt.same {
			t.Errorf("Same(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.same)
		}
	}
}

// Keys are what caches, credential templates (by prefix) and sourceRepos
// globs compare, so patterns must come out in the same form as URLs.
func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://GitHub.com/Org/Repo.git":          "https://github.com/org/repo",
		"http://alice:pw@example.com:8080/app.git": "http://example.com:8080/app",
		"ssh://git@example.com:2222/org/app.git":   "ssh://git@example.com:2222/org/app",
		"git@github.com:org/app.git":               "ssh://git@github.com/org/app",
		"github.com:org/repo":                      "ssh://github.com/org/repo",
		"file:///srv/repo.git":                     "file:///srv/repo",
		"https://github.com":                       "https://github.com",
		"https://github.com/org/*.git":             "https://github.com/org/*",
		"git@github.com:org/*":                     "ssh://git@github.com/org/*",
		"https://*.example.com/**":                 "https://*.example.com/**",
		"https://github.com/org/app-?":             "https://github.com/org/app-?",
		"https://{github,gitlab}.com/team-[ab]/*":  "https://{github,gitlab}.com/team-[ab]/*",
		"*":                  "*",
		"/srv/git/Repo.git/": "/srv/git/repo",
		"/":                  "",
		"":                   "",
		"https://%zz/x":      "https://%zz/x",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLocation(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"https://github.com/org/repo", "github.com/org/repo", true},
		{"https://GitHub.com/Org/Repo.git", "github.com/org/repo", true},
		{"https://github.com/org/repo.git/", "github.com/org/repo", true},
		{"http://user:token@github.com:443/org/repo", "github.com/org/repo", true},
		{"ssh://git@github.com:22/org/repo.git", "github.com/org/repo", true},
		{"git@github.com:org/repo.git", "github.com/org/repo", true},
		{"github.com:org/repo", "github.com/org/repo", true},
		{"  https://gitlab.com/group/sub/repo  ", "gitlab.com/group/sub/repo", true},
		{"git@ssh.dev.azure.com:v3/org/project/repo", "dev.azure.com/org/project/_git/repo", true},
		{"https://org@dev.azure.com/org/project/_git/repo", "dev.azure.com/org/project/_git/repo", true},
		{"git://github.com/org/repo.git", "github.com/org/repo", true},
		{"file:///srv/git/repo", "", false},
		{"/srv/git/repo", "", false},
		{"oci://registry.example.com/charts/x", "", false},
		{"https://github.com", "", false},
		{"https://github.com/.git", "", false},
		{"", "", false},
		{"https://%zz/x", "", false},
	}
	for _, tt := range tests {
		got, ok := Parse(tt.in).Location()
		if got != tt.want || ok != tt.ok {
			t.Errorf("Location(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// Redact replaces the three redactors of reposerver/git, controller/project
// and the webhook; the webhook's dropped user names, SSH ones included.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/org/repo":                 "https://github.com/org/repo",
		"https://alice:s3cret@example.com/repo.git":   "https://alice:***@example.com/repo.git",
		"https://ghp_token@github.com/org/repo":       "https://***@github.com/org/repo",
		"HTTP://token@host":                           "HTTP://***@host",
		"ssh://git@github.com/org/repo":               "ssh://git@github.com/org/repo",
		"ssh://git:secret@github.com/org/repo":        "ssh://git:***@github.com/org/repo",
		"git@github.com:org/repo.git":                 "git@github.com:org/repo.git",
		"https://github.com/org/repo@v1":              "https://github.com/org/repo@v1",
		"https://u:p@ss@host/x":                       "https://u:***@host/x",
		"not a url":                                   "not a url",
		`Get "https://bob:pw123@host/x": dial tcp`:    `Get "https://bob:***@host/x": dial tcp`,
		"clone https://u:p@ss@host/x and https://t@h": "clone https://u:***@host/x and https://***@h",
		"https://tok@%zz/x":                           "https://***@%zz/x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Parse("https://u:pw@host/r").String(), "https://u:***@host/r"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
