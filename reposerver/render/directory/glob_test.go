package directory

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		path    string
		want    bool
	}{
		{"*.yaml", "a.yaml", true},
		{"*.yaml", "dir/a.yaml", true}, // "*" crosses "/", as in Argo CD
		{"*.yaml", "a.yml", false},
		{"config.yaml", "config.yaml", true},
		{"config.yaml", "sub/config.yaml", false},
		{"some-directory/*", "some-directory/a/b.yaml", true},
		{"some-directory/*", "other/a.yaml", false},
		{"{*.yml,*.yaml}", "x.yml", true},
		{"{*.yml,*.yaml}", "x.yaml", true},
		{"{*.yml,*.yaml}", "x.json", false},
		{"{config.json,env-usw2/*}", "config.json", true},
		{"{config.json,env-usw2/*}", "env-usw2/cm.yaml", true},
		{"{config.json,env-usw2/*}", "env-use2/cm.yaml", false},
		{"{a,b{c,d}}.yaml", "bd.yaml", true},
		{"{a,b{c,d}}.yaml", "b.yaml", false},
		{"{,x}a", "a", true},
		{"?.yaml", "a.yaml", true},
		{"?.yaml", "ab.yaml", false},
		{"[ab]*", "b.yaml", true},
		{"[!ab]*", "b.yaml", false},
		{"[!ab]*", "c.yaml", true},
		{"[^ab]*", "c.yaml", true},
		{"[a-c].yaml", "b.yaml", true},
		{"[a-c].yaml", "d.yaml", false},
		{"[]]", "]", true},
		{`\*.yaml`, "*.yaml", true},
		{`\*.yaml`, "a.yaml", false},
		{"**/x.yaml", "a/b/x.yaml", true},
		{"*a*b*c", "xxaxxbxxc", true},
		{"*a*b*c", "xxaxxbxx", false},
		{"é*", "été.yaml", true},
	}
	for _, tt := range tests {
		g, err := compileGlob(tt.pattern)
		if err != nil {
			t.Errorf("compileGlob(%q): %v", tt.pattern, err)
			continue
		}
		if got := g.match(tt.path); got != tt.want {
			t.Errorf("%q matching %q = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}

func TestGlobInvalid(t *testing.T) {
	for _, p := range []string{"{a,b", "[ab", `a\`, "[z-a]", strings.Repeat("{", 40) + strings.Repeat("}", 40), strings.Repeat("a", maxGlobLen+1), "\xff"} {
		if _, err := compileGlob(p); err == nil {
			t.Errorf("compileGlob(%.40q) succeeded, want an error", p)
		}
	}
}

// BenchmarkGlobPathological matches a pattern that makes backtracking
// matchers exponential; the NFA stays linear.
func BenchmarkGlobPathological(b *testing.B) {
	g, err := compileGlob(strings.Repeat("*a", 30) + "b")
	if err != nil {
		b.Fatal(err)
	}
	path := strings.Repeat("a", 200)
	for b.Loop() {
		if g.match(path) {
			b.Fatal("matched")
		}
	}
}
