package kustomize

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// buildOptions are the `kustomize build` flags of kustomize.buildOptions
// that graphcd's built-in kustomize honours.
type buildOptions struct {
	// enableHelm lets helmCharts inflate (--enable-helm).
	enableHelm bool
	// loadRestrictions is --load-restrictor; graphcd's default is
	// LoadRestrictionsNone: the repository, not the kustomization's
	// directory, is the boundary.
	loadRestrictions types.LoadRestrictions
	reorder          krusty.ReorderOption
	managedBy        bool
}

// parseBuildOptions reads kustomize.buildOptions. Flags that would run
// plugins or programs or reach the network are refused, as are flags
// graphcd does not know: a build that silently differs from the one
// asked for would be worse.
func parseBuildOptions(s string) (buildOptions, error) {
	o := buildOptions{loadRestrictions: types.LoadRestrictionsNone, reorder: krusty.ReorderOptionUnspecified}
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		name, value, hasValue := strings.Cut(fields[i], "=")
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(fields) || strings.HasPrefix(fields[i+1], "-") {
				return "", fmt.Errorf("kustomize.buildOptions: %s needs a value", name)
			}
			i++
			return fields[i], nil
		}
		switch name {
		case "--enable-helm":
			o.enableHelm = true
		case "--enable-managedby-label":
			o.managedBy = true
		case "--load-restrictor", "--load_restrictor":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			switch v {
			case "LoadRestrictionsNone", "none":
				o.loadRestrictions = types.LoadRestrictionsNone
			case "LoadRestrictionsRootOnly", "rootOnly":
				o.loadRestrictions = types.LoadRestrictionsRootOnly
			default:
				return o, fmt.Errorf("kustomize.buildOptions: --load-restrictor %q: want LoadRestrictionsNone or LoadRestrictionsRootOnly", v)
			}
		case "--reorder":
			v, err := takeValue()
			if err != nil {
				return o, err
			}
			switch v {
			case "legacy":
				o.reorder = krusty.ReorderOptionLegacy
			case "none":
				o.reorder = krusty.ReorderOptionNone
			default:
				return o, fmt.Errorf("kustomize.buildOptions: --reorder %q: want legacy or none", v)
			}
		case "--helm-command":
			// Helm is built in; the binary it names is never run.
			if _, err := takeValue(); err != nil {
				return o, err
			}
		case "--enable-alpha-plugins", "--enable-exec", "--enable-star", "--network", "--mount", "--env", "-e":
			return o, fmt.Errorf("kustomize.buildOptions: %s is refused: graphcd's built-in kustomize runs no plugins or programs and reaches no network", name)
		default:
			return o, fmt.Errorf("kustomize.buildOptions: %s is not a flag graphcd's built-in kustomize knows (it knows --enable-helm, --load-restrictor, --reorder, --enable-managedby-label, --helm-command)", name)
		}
	}
	return o, nil
}

// HelmEnabled reports whether kustomize.buildOptions lets helmCharts
// inflate (--enable-helm); false when the options do not parse (the
// render then says why).
func HelmEnabled(buildOptions string) bool {
	o, err := parseBuildOptions(buildOptions)
	return err == nil && o.enableHelm
}

// BuiltinVersion is the version of the kustomize library graphcd renders
// with (sigs.k8s.io/kustomize/api), "unknown" when the binary does not
// say.
var BuiltinVersion = sync.OnceValue(func() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "sigs.k8s.io/kustomize/api" {
				return m.Version
			}
		}
	}
	return "unknown"
})

// checkVersion refuses a source that asks for a kustomize version
// (spec.source.kustomize.version, Argo CD's kustomize.version.<v>
// binaries): graphcd has only its built-in kustomize, and rendering with
// another than the one asked for would be silent.
func checkVersion(v string) error {
	if v == "" {
		return nil
	}
	return fmt.Errorf("kustomize version %s is not available: graphcd renders with its built-in kustomize (sigs.k8s.io/kustomize/api %s); remove spec.source.kustomize.version", v, BuiltinVersion())
}
