package kustomize

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

func TestParseBuildOptions(t *testing.T) {
	t.Parallel()
	o, err := parseBuildOptions("")
	if err != nil || o.enableHelm || o.loadRestrictions != types.LoadRestrictionsNone || o.reorder != krusty.ReorderOptionUnspecified {
		t.Errorf("defaults = %+v, %v", o, err)
	}
	o, err = parseBuildOptions("--enable-helm --load-restrictor LoadRestrictionsRootOnly --reorder=none --enable-managedby-label --helm-command /usr/bin/helm")
	if err != nil || !o.enableHelm || o.loadRestrictions != types.LoadRestrictionsRootOnly || o.reorder != krusty.ReorderOptionNone || !o.managedBy {
		t.Errorf("all flags = %+v, %v", o, err)
	}
	for opts, want := range map[string]string{
		"--enable-alpha-plugins":       "is refused",
		"--network":                    "is refused",
		"--load-restrictor":            "needs a value",
		"--load-restrictor Everything": `"Everything"`,
		"--reorder sideways":           `"sideways"`,
		"build":                        "not a flag",
	} {
		if _, err := parseBuildOptions(opts); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseBuildOptions(%q) = %v, want %q", opts, err, want)
		}
	}
}
