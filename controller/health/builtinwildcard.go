package health

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// builtinPatternChecks are the built-in checks for whole families of kinds,
// by group and kind patterns where "*" matches any run of characters (as in
// Lua checks). They are tried in order, the first that judges the object
// deciding, and only when builtinChecks has no exact entry: an exact entry
// always wins. A check returns false when the object is not one it judges
// (a Crossplane ProviderConfig, say); with none left, the kind has no
// health.
var builtinPatternChecks = []struct {
	group, kind string
	check       func(*unstructured.Unstructured) (Result, bool)
}{
	{"*.crossplane.io", "*", crossplaneManagedHealth},
	{"*.upbound.io", "*", crossplaneManagedHealth},
	{"constraints.gatekeeper.sh", "*", gatekeeperConstraintHealth},
}

// builtinCheck returns the built-in verdict on obj of kind gk, and false
// when no built-in check applies.
func builtinCheck(gk groupKind, obj *unstructured.Unstructured) (Result, bool) {
	if fn, ok := builtinChecks[gk]; ok {
		return fn(obj), true
	}
	for _, p := range builtinPatternChecks {
		if wildcardMatch(p.group, gk.group) && wildcardMatch(p.kind, gk.kind) {
			if res, ok := p.check(obj); ok {
				return res, true
			}
		}
	}
	return Result{}, false
}
