// Package engineopts turns the settings, a plain view of graphcd-cm,
// into the diff and health engines' options. It sits above both, so that
// neither the engines nor the settings import the other, and below the
// reconciler and the offline admin tools, which both use it.
package engineopts

import (
	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/actions"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/health"
	"github.com/graphcd/graphcd/internal/settings"
)

// HealthChecks returns the Lua health checks s configures, for
// health.New.
func HealthChecks(s *settings.Settings) []health.LuaCheck {
	var checks []health.LuaCheck
	for _, c := range s.Customizations {
		if c.HealthLua != "" {
			checks = append(checks, health.LuaCheck{Group: c.Group, Kind: c.Kind, Script: c.HealthLua, UseOpenLibs: c.UseOpenLibs})
		}
	}
	return checks
}

// Actions returns the custom resource actions s configures, for
// actions.New; a kind's scripts get its useOpenLibs setting.
func Actions(s *settings.Settings) []actions.Custom {
	var out []actions.Custom
	for _, c := range s.Customizations {
		if c.Actions == nil {
			continue
		}
		custom := actions.Custom{
			Group: c.Group, Kind: c.Kind, Discovery: c.Actions.DiscoveryLua,
			MergeBuiltin: c.Actions.MergeBuiltinActions, UseOpenLibs: c.UseOpenLibs,
		}
		for _, d := range c.Actions.Definitions {
			custom.Definitions = append(custom.Definitions, actions.Definition{Name: d.Name, Script: d.ActionLua})
		}
		out = append(out, custom)
	}
	return out
}

// IgnoreRules returns the system-level ignoreDifferences rules of s
// followed by the application's own, for diff.New.
func IgnoreRules(s *settings.Settings, app []v1alpha1.ResourceIgnoreDifferences) []diff.IgnoreRule {
	var rules []diff.IgnoreRule
	if all := s.IgnoreDifferencesAll; all != nil {
		rules = append(rules, rule("*", "*", "", "", all))
	}
	for _, c := range s.Customizations {
		if c.IgnoreDifferences != nil {
			rules = append(rules, rule(c.Group, c.Kind, "", "", c.IgnoreDifferences))
		}
	}
	for _, d := range app {
		rules = append(rules, rule(d.Group, d.Kind, d.Name, d.Namespace, &settings.IgnoreDifferences{
			JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, ManagedFieldsManagers: d.ManagedFieldsManagers,
		}))
	}
	return rules
}

func rule(group, kind, name, namespace string, ig *settings.IgnoreDifferences) diff.IgnoreRule {
	return diff.IgnoreRule{
		Group: group, Kind: kind, Name: name, Namespace: namespace,
		JSONPointers: ig.JSONPointers, JQPathExpressions: ig.JQPathExpressions, ManagedFieldsManagers: ig.ManagedFieldsManagers,
	}
}
