// Package settings parses graphcd's settings ConfigMap, graphcd-cm, into
// typed structs. Its keys are Argo CD's argocd-cm keys wherever one exists,
// so an argocd-cm carries over unchanged:
//
//	data:
//	  resource.customizations.health.cert-manager.io_Certificate: |
//	    hs = {status = "Healthy"}
//	    return hs
//	  resource.customizations.useOpenLibs.cert-manager.io_Certificate: "true"
//	  resource.customizations: |
//	    argoproj.io/*:
//	      health.lua: |
//	        ...
//	  resource.customizations.actions.batch_CronJob: |
//	    discovery.lua: |
//	      return {suspend = {disabled = obj.spec.suspend == true}}
//	    definitions:
//	    - name: suspend
//	      action.lua: |
//	        obj.spec.suspend = true
//	        return obj
//	  resource.customizations.ignoreDifferences.apps_Deployment: |
//	    jsonPointers: [/spec/replicas]
//	  resource.exclusions: |
//	    - apiGroups: [cilium.io]
//	      kinds: [CiliumIdentity]
//
// A key's group and kind are written `<group>_<kind>`, or just `<kind>` for
// the core group. Errors name the key and the line, counted in the ConfigMap
// file when one is parsed with ParseConfigMap.
package settings

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Settings is the parsed graphcd-cm.
type Settings struct {
	// Customizations holds per group/kind health checks and diff rules,
	// merged from the split keys and the map form; Group and Kind may
	// contain `*` wildcards.
	Customizations []Customization
	// IgnoreDifferencesAll applies to every resource
	// (resource.customizations.ignoreDifferences.all).
	IgnoreDifferencesAll *IgnoreDifferences
	// Exclusions and Inclusions filter which resources graphcd watches
	// (resource.exclusions, resource.inclusions).
	Exclusions, Inclusions []ResourceFilter
	// CompareOptions is resource.compareoptions.
	CompareOptions CompareOptions
	// InstanceLabelKey is application.instanceLabelKey (default
	// app.kubernetes.io/instance).
	InstanceLabelKey string
	// TrackingMethod is application.resourceTrackingMethod: annotation
	// (the default), annotation+label or label.
	TrackingMethod string
	// ServerSideDiff is controller.diff.server.side: every application
	// uses server-side diff unless its compare-options say
	// ServerSideDiff=false.
	ServerSideDiff bool
	// SyncImpersonation is application.sync.impersonation.enabled: syncs
	// (and server-side diff) run as the service account the app's project
	// names for its destination in spec.destinationServiceAccounts.
	SyncImpersonation bool
	// HelmValuesFileSchemes is helm.valuesFileSchemes: the URL schemes
	// Helm value files may be fetched with; nil leaves the repository
	// server's default (http, https).
	HelmValuesFileSchemes []string
	// KustomizeBuildOptions is kustomize.buildOptions: `kustomize build`
	// flags for every Kustomize source ("--enable-helm").
	KustomizeBuildOptions string
}

// Customization is what the settings say about one group/kind pattern.
type Customization struct {
	Group, Kind string
	// HealthLua is a Lua health check in Argo CD's form ("" = none).
	HealthLua string
	// UseOpenLibs gives the health script the open standard libraries.
	UseOpenLibs bool
	// IgnoreDifferences are diff rules for the kind (nil = none).
	IgnoreDifferences *IgnoreDifferences
	// Actions are custom resource actions for the kind (nil = none).
	Actions *Actions
}

// Actions are a kind's custom resource actions in Argo CD's form
// (resource.customizations.actions.<group>_<kind>): a discovery script
// that returns the actions available on an object, and one script per
// action.
type Actions struct {
	DiscoveryLua string             `json:"discovery.lua" yaml:"discovery.lua"`
	Definitions  []ActionDefinition `json:"definitions,omitempty" yaml:"definitions,omitempty"`
	// MergeBuiltinActions keeps the built-in actions of the kind next to
	// these; without it these replace them.
	MergeBuiltinActions bool `json:"mergeBuiltinActions,omitempty" yaml:"mergeBuiltinActions,omitempty"`
}

// ActionDefinition is one action's script, which reads obj (and
// actionParams) and returns the changed object or a list of
// {operation, resource}.
type ActionDefinition struct {
	Name      string `json:"name" yaml:"name"`
	ActionLua string `json:"action.lua" yaml:"action.lua"`
}

// IgnoreDifferences lists the parts of a resource that diffs skip.
type IgnoreDifferences struct {
	JSONPointers          []string `json:"jsonPointers,omitempty" yaml:"jsonPointers,omitempty"`
	JQPathExpressions     []string `json:"jqPathExpressions,omitempty" yaml:"jqPathExpressions,omitempty"`
	ManagedFieldsManagers []string `json:"managedFieldsManagers,omitempty" yaml:"managedFieldsManagers,omitempty"`
}

// ResourceFilter matches resources by API group, kind and cluster URL;
// each list may hold `*` globs, and an empty list matches everything.
type ResourceFilter struct {
	APIGroups []string `json:"apiGroups,omitempty" yaml:"apiGroups,omitempty"`
	Kinds     []string `json:"kinds,omitempty" yaml:"kinds,omitempty"`
	Clusters  []string `json:"clusters,omitempty" yaml:"clusters,omitempty"`
}

// CompareOptions are resource.compareoptions.
type CompareOptions struct {
	IgnoreAggregatedRoles bool `json:"ignoreAggregatedRoles,omitempty" yaml:"ignoreAggregatedRoles,omitempty"`
	// IgnoreResourceStatusField is crd (default), all, or none/off.
	IgnoreResourceStatusField string `json:"ignoreResourceStatusField,omitempty" yaml:"ignoreResourceStatusField,omitempty"`
}

// Tracking methods (application.resourceTrackingMethod).
const (
	TrackingAnnotation         = "annotation"
	TrackingAnnotationAndLabel = "annotation+label"
	TrackingLabel              = "label"
)

// Defaults of keys that are unset. The tracking method is Argo CD 3's
// default; an Argo CD 2 installation that never set the key tracked by
// label and keeps doing so by setting it to label.
const (
	DefaultInstanceLabelKey = "app.kubernetes.io/instance"
	DefaultTrackingMethod   = TrackingAnnotation
)

const (
	keyCustomizations    = "resource.customizations"
	prefixHealth         = "resource.customizations.health."
	prefixOpenLibs       = "resource.customizations.useOpenLibs."
	prefixIgnoreDiff     = "resource.customizations.ignoreDifferences."
	prefixActions        = "resource.customizations.actions."
	keyExclusions        = "resource.exclusions"
	keyInclusions        = "resource.inclusions"
	keyCompareOptions    = "resource.compareoptions"
	keyInstanceLabelKey  = "application.instanceLabelKey"
	keyTrackingMethod    = "application.resourceTrackingMethod"
	keyServerSideDiff    = "controller.diff.server.side"
	ignoreDifferencesAll = "all"
)

// KeyValuesFileSchemes is the graphcd-cm key of HelmValuesFileSchemes.
const KeyValuesFileSchemes = "helm.valuesFileSchemes"

// KeyKustomizeBuildOptions is the graphcd-cm key of KustomizeBuildOptions.
const KeyKustomizeBuildOptions = "kustomize.buildOptions"

// KeySyncImpersonation is the graphcd-cm key that turns sync impersonation
// on (SyncImpersonation).
const KeySyncImpersonation = "application.sync.impersonation.enabled"

// Error is a problem with one settings key, with the line where it was
// found (0 when unknown).
type Error struct {
	Key  string
	Line int
	Err  error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("settings key %q (line %d): %v", e.Key, e.Line, e.Err)
	}
	return fmt.Sprintf("settings key %q: %v", e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Parse reads the data of a graphcd-cm (or argocd-cm) ConfigMap. Unknown
// keys are ignored, as other features own them.
func Parse(data map[string]string) (*Settings, error) {
	return parse(data, nil)
}

// parse does Parse; lines, when known, gives the file line where each key's
// value starts, so errors inside a value can be placed in the file.
func parse(data map[string]string, lines map[string]int) (*Settings, error) {
	s := &Settings{InstanceLabelKey: DefaultInstanceLabelKey, TrackingMethod: DefaultTrackingMethod}
	fail := func(key string, err error) error {
		line := lines[key]
		if le, ok := err.(*lineError); ok { //nolint:errorlint // our own unwrapped type
			if line > 0 {
				line += le.line - 1
			} else {
				line = le.line
			}
			err = le.err
		}
		return &Error{Key: key, Line: line, Err: err}
	}
	byPattern := map[[2]string]*Customization{}
	get := func(group, kind string) *Customization {
		k := [2]string{group, kind}
		if c := byPattern[k]; c != nil {
			return c
		}
		c := &Customization{Group: group, Kind: kind}
		byPattern[k] = c
		return c
	}

	// The map form first, so a split key for the same kind overrides it.
	if v, ok := data[keyCustomizations]; ok && strings.TrimSpace(v) != "" {
		var m map[string]struct {
			HealthLua         string `yaml:"health.lua"`
			UseOpenLibs       bool   `yaml:"health.lua.useOpenLibs"`
			IgnoreDifferences string `yaml:"ignoreDifferences"`
			Actions           string `yaml:"actions"`
		}
		if err := decodeYAML(v, &m); err != nil {
			return nil, fail(keyCustomizations, err)
		}
		for pattern, cust := range m {
			group, kind, err := splitPattern(pattern, "/")
			if err != nil {
				return nil, fail(keyCustomizations, err)
			}
			c := get(group, kind)
			c.HealthLua, c.UseOpenLibs = cust.HealthLua, cust.UseOpenLibs
			if strings.TrimSpace(cust.IgnoreDifferences) != "" {
				var ig IgnoreDifferences
				if err := decodeYAML(cust.IgnoreDifferences, &ig); err != nil {
					return nil, fail(keyCustomizations, fmt.Errorf("%s ignoreDifferences: %w", pattern, unline(err)))
				}
				c.IgnoreDifferences = &ig
			}
			if strings.TrimSpace(cust.Actions) != "" {
				a, err := parseActions(cust.Actions)
				if err != nil {
					return nil, fail(keyCustomizations, fmt.Errorf("%s actions: %w", pattern, unline(err)))
				}
				c.Actions = a
			}
		}
	}

	for _, key := range sortedKeys(data) {
		v := data[key]
		var err error
		switch {
		case strings.HasPrefix(key, prefixHealth):
			err = withKind(key, prefixHealth, func(g, k string) error { get(g, k).HealthLua = v; return nil })
		case strings.HasPrefix(key, prefixOpenLibs):
			err = withKind(key, prefixOpenLibs, func(g, k string) error {
				b, err := strconv.ParseBool(strings.TrimSpace(v))
				if err != nil {
					return fmt.Errorf("want true or false, got %q", v)
				}
				get(g, k).UseOpenLibs = b
				return nil
			})
		case key == prefixIgnoreDiff+ignoreDifferencesAll:
			var ig IgnoreDifferences
			if err = decodeYAML(v, &ig); err == nil {
				s.IgnoreDifferencesAll = &ig
			}
		case strings.HasPrefix(key, prefixIgnoreDiff):
			err = withKind(key, prefixIgnoreDiff, func(g, k string) error {
				var ig IgnoreDifferences
				if err := decodeYAML(v, &ig); err != nil {
					return err
				}
				get(g, k).IgnoreDifferences = &ig
				return nil
			})
		case strings.HasPrefix(key, prefixActions):
			err = withKind(key, prefixActions, func(g, k string) error {
				a, err := parseActions(v)
				if err != nil {
					return err
				}
				get(g, k).Actions = a
				return nil
			})
		case key == keyExclusions:
			err = decodeYAML(v, &s.Exclusions)
		case key == keyInclusions:
			err = decodeYAML(v, &s.Inclusions)
		case key == keyCompareOptions:
			err = decodeYAML(v, &s.CompareOptions)
			if err == nil {
				err = checkStatusField(s.CompareOptions.IgnoreResourceStatusField)
			}
		case key == keyInstanceLabelKey:
			if t := strings.TrimSpace(v); t != "" {
				s.InstanceLabelKey = t
			}
		case key == keyTrackingMethod:
			err = s.setTrackingMethod(strings.TrimSpace(v))
		case key == keyServerSideDiff:
			err = setBool(&s.ServerSideDiff, strings.TrimSpace(v))
		case key == KeySyncImpersonation:
			err = setBool(&s.SyncImpersonation, strings.TrimSpace(v))
		case key == KeyValuesFileSchemes:
			s.HelmValuesFileSchemes = ValuesFileSchemes(v)
		case key == KeyKustomizeBuildOptions:
			s.KustomizeBuildOptions = strings.TrimSpace(v)
		}
		if err != nil {
			return nil, fail(key, err)
		}
	}

	for _, c := range byPattern {
		s.Customizations = append(s.Customizations, *c)
	}
	sort.Slice(s.Customizations, func(i, j int) bool {
		a, b := s.Customizations[i], s.Customizations[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Kind < b.Kind
	})
	return s, nil
}

// parseActions reads one kind's actions and checks that each definition
// has a name, used once, and a script.
func parseActions(v string) (*Actions, error) {
	var a Actions
	if err := decodeYAML(v, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.DiscoveryLua) == "" {
		return nil, errors.New("discovery.lua is empty: it returns the actions available on an object")
	}
	seen := make(map[string]bool, len(a.Definitions))
	for i, d := range a.Definitions {
		switch {
		case d.Name == "":
			return nil, fmt.Errorf("definitions[%d]: name is empty", i)
		case seen[d.Name]:
			return nil, fmt.Errorf("definitions[%d]: action %q is defined twice", i, d.Name)
		case strings.TrimSpace(d.ActionLua) == "":
			return nil, fmt.Errorf("definitions[%d] (%s): action.lua is empty", i, d.Name)
		}
		seen[d.Name] = true
	}
	return &a, nil
}

func (s *Settings) setTrackingMethod(v string) error {
	switch v {
	case "":
	case TrackingAnnotation, TrackingAnnotationAndLabel, TrackingLabel:
		s.TrackingMethod = v
	default:
		return fmt.Errorf("want annotation, annotation+label or label, got %q", v)
	}
	return nil
}

// setBool sets *dst from a switch's value; "" leaves the default.
// ValuesFileSchemes parses helm.valuesFileSchemes, a comma-separated
// list of URL schemes ("https, http"); nil when it names none.
func ValuesFileSchemes(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func setBool(dst *bool, v string) error {
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, got %q", v)
	}
	*dst = b
	return nil
}

func checkStatusField(v string) error {
	switch v {
	case "", "crd", "all", "none", "off":
		return nil
	}
	return fmt.Errorf("ignoreResourceStatusField: want crd, all, none or off, got %q", v)
}

// withKind parses the `<group>_<kind>` suffix of a split key.
func withKind(key, prefix string, f func(group, kind string) error) error {
	group, kind, err := splitPattern(strings.TrimPrefix(key, prefix), "_")
	if err != nil {
		return err
	}
	return f(group, kind)
}

// splitPattern splits "group<sep>Kind" (or "Kind" for the core group). The
// kind is the part after the last separator: group names hold dots and
// dashes, never the separator.
func splitPattern(s, sep string) (group, kind string, err error) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		group, kind = "", s
	} else {
		group, kind = s[:i], s[i+len(sep):]
	}
	if kind == "" || strings.ContainsAny(kind, " \t/") || strings.ContainsAny(group, " \t") {
		return "", "", fmt.Errorf("%q is not a valid group%sKind", s, sep)
	}
	return group, kind, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
