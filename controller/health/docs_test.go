package health

import (
	"os"
	"strings"
	"testing"
)

// TestBuiltinChecksDocumented keeps the "Built-in health checks" section
// of docs/configuration.md in step with builtinChecks and
// builtinPatternChecks: every group/kind is listed in a table row whose
// first cell names the group ("(core)" for the core group) and whose
// second names the kind.
func TestBuiltinChecksDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Built-in health checks\n")
	if !ok {
		t.Fatal(`docs/configuration.md has no "## Built-in health checks" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[groupKind]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 3 {
			continue
		}
		for _, g := range strings.Split(strings.TrimPrefix(cells[0], "| "), ", ") {
			g = strings.Trim(g, "`")
			if g == "(core)" {
				g = ""
			}
			for _, k := range strings.Split(cells[1], ", ") {
				listed[groupKind{group: g, kind: strings.Trim(k, "`")}] = true
			}
		}
	}
	for gk := range builtinChecks {
		if !listed[gk] {
			t.Errorf("docs/configuration.md does not list the built-in check for %s", gk)
		}
	}
	for _, p := range builtinPatternChecks {
		if !listed[groupKind{group: p.group, kind: p.kind}] {
			t.Errorf("docs/configuration.md does not list the built-in check for %s/%s", p.group, p.kind)
		}
	}
}
