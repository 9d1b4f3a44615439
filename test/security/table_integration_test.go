//go:build integration

package security

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// tableRow is a row of docs/security.md's table of cases:
// | `case` | class | ...
var tableRow = regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| ([^|]+?) \\|")

// TestCaseTable keeps docs/security.md's table and the suite in step: every
// case is in the table with its class, and the table lists no other.
func TestCaseTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(localcluster.RepoRoot(), "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## The security test suite\n")
	if !ok {
		t.Fatal(`docs/security.md has no section "## The security test suite"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	documented := map[string]string{}
	for _, m := range tableRow.FindAllStringSubmatch(section, -1) {
		documented[m[1]] = m[2]
	}
	for _, a := range attacks {
		class, ok := documented[a.name]
		switch {
		case !ok:
			t.Errorf("case %s is not in docs/security.md's table", a.name)
		case class != a.class:
			t.Errorf("case %s: the table gives the class %q, the suite %q", a.name, class, a.class)
		}
		delete(documented, a.name)
	}
	for name := range documented {
		t.Errorf("docs/security.md's table lists %s, which the suite does not run", name)
	}
}
