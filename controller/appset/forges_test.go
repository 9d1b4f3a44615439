package appset

import "testing"

func TestForgePolicy(t *testing.T) {
	p := ForgePolicy{Allowed: []string{"https://git.example.com/gitea", "http://127.0.0.1:3000"}}
	for api, ok := range map[string]bool{
		"https://api.github.com":                true,
		"https://api.github.com/":               true,
		"https://gitlab.com/api/v4":             true,
		"https://git.example.com/gitea":         true,
		"https://git.example.com/gitea/api/v1":  true,
		"https://git.example.com/giteaevil":     false,
		"https://git.example.com/":              false,
		"http://git.example.com/gitea":          false,
		"http://127.0.0.1:3000/":                true,
		"http://127.0.0.1:3001/":                false,
		"https://api.github.com.evil.example/":  false,
		"https://user:pw@git.example.com/gitea": false,
		"ftp://git.example.com/gitea":           false,
		"https://evil.example/":                 false,
	} {
		if err := p.check(api); (err == nil) != ok {
			t.Errorf("check(%q) = %v, want allowed %v", api, err, ok)
		}
	}
	if err := (ForgePolicy{Disabled: true}).check("https://api.github.com/"); err == nil {
		t.Error("a disabled policy allowed the public API")
	}
}
