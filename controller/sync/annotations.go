package sync

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The annotations the planner reads, as Argo CD names them.
const (
	AnnotationHook                 = "argocd.argoproj.io/hook"
	AnnotationHookDeletePolicy     = "argocd.argoproj.io/hook-delete-policy"
	AnnotationSyncWave             = "argocd.argoproj.io/sync-wave"
	AnnotationSyncOptions          = "argocd.argoproj.io/sync-options"
	AnnotationHelmHook             = "helm.sh/hook"
	AnnotationHelmHookWeight       = "helm.sh/hook-weight"
	AnnotationHelmHookDeletePolicy = "helm.sh/hook-delete-policy"
	AnnotationHelmResourcePolicy   = "helm.sh/resource-policy"
)

var hookTypes = []HookType{HookPreSync, HookSync, HookPostSync, HookSyncFail, HookSkip, HookPreDelete, HookPostDelete}

// helmHooks maps helm.sh/hook values to Argo CD hook types. An empty
// type marks a value Argo CD does not run (tests, rollbacks); crd-install
// is not a hook at all (see helmHookOf).
var helmHooks = map[string]HookType{
	"pre-install":   HookPreSync,
	"pre-upgrade":   HookPreSync,
	"post-install":  HookPostSync,
	"post-upgrade":  HookPostSync,
	"pre-delete":    HookPreDelete,
	"post-delete":   HookPostDelete,
	"pre-rollback":  "",
	"post-rollback": "",
	"test":          "",
	"test-success":  "",
	"test-failure":  "",
	"crd-install":   "",
}

var deletePolicies = map[string]DeletePolicy{
	string(DeleteBeforeHookCreation): DeleteBeforeHookCreation,
	string(DeleteHookSucceeded):      DeleteHookSucceeded,
	string(DeleteHookFailed):         DeleteHookFailed,
	string(DeleteNever):              DeleteNever,
}

var helmDeletePolicies = map[string]DeletePolicy{
	"before-hook-creation": DeleteBeforeHookCreation,
	"hook-succeeded":       DeleteHookSucceeded,
	"hook-failed":          DeleteHookFailed,
}

// policyOrder is the order DeletePolicies are listed in.
var policyOrder = []DeletePolicy{DeleteBeforeHookCreation, DeleteHookSucceeded, DeleteHookFailed, DeleteNever}

// inspection is what an object's metadata says about how to sync it.
type inspection struct {
	hook bool
	// badHook is true when the hook annotation could not be read.
	badHook bool
	// hookObject is true for what Argo CD counts as a hook object, whether
	// or not it runs in a sync: never pruned, never compared. Only a lone
	// Skip and a lone Helm crd-install are not hook objects.
	hookObject bool
	// phases are the hook's phases (sync and deletion ones), in phase
	// order; empty for a plain resource.
	phases []Phase
	// leftOut, when not empty, is why the object gets no task although
	// it is desired (Skip, or only Helm hooks Argo CD does not run).
	leftOut  string
	wave     int
	policies []DeletePolicy
	options  SyncOptions
	errs     []error
	warnings []error
}

// inspect reads obj's sync annotations, on top of the application's
// options. It reports every bad annotation and never panics on odd input.
func inspect(obj *unstructured.Unstructured, app SyncOptions) inspection {
	in := inspection{options: app}
	ann, err := annotationsOf(obj)
	if err != nil {
		in.errs = append(in.errs, err)
	}
	in.readHook(ann)
	in.readWave(ann)
	in.readPolicies(ann)
	if ann[AnnotationHelmResourcePolicy] == "keep" {
		in.options.Delete = Deny
	}
	if v, ok := ann[AnnotationSyncOptions]; ok {
		var errs, warnings []error
		in.options, errs, warnings = in.options.withAnnotation(v)
		in.errs = append(in.errs, errs...)
		in.warnings = append(in.warnings, warnings...)
	}
	return in
}

// readHook follows Argo CD: an argocd.argoproj.io/hook annotation wins
// over helm.sh/hook, whose values are then ignored.
func (in *inspection) readHook(ann map[string]string) {
	if v, ok := ann[AnnotationHook]; ok {
		in.readArgoHook(v)
		return
	}
	if v, ok := ann[AnnotationHelmHook]; ok {
		in.readHelmHook(v)
	}
}

func (in *inspection) readArgoHook(value string) {
	in.hookObject = true
	entries := csv(value)
	if len(entries) == 0 {
		in.errs = append(in.errs, fmt.Errorf("annotation %s is empty", AnnotationHook))
		in.badHook = true
		return
	}
	var types []HookType
	for _, e := range entries {
		if !slices.Contains(hookTypes, HookType(e)) {
			in.errs = append(in.errs, fmt.Errorf("annotation %s: unknown hook type %q%s", AnnotationHook, e, suggest(e, hookNames())))
			in.badHook = true
			continue
		}
		types = append(types, HookType(e))
	}
	if in.badHook {
		return
	}
	others := slices.DeleteFunc(slices.Clone(types), func(t HookType) bool { return t == HookSkip })
	switch {
	case len(others) == 0:
		in.leftOut = "Skip"
		in.hookObject = false
		return
	case len(others) < len(types):
		in.warnings = append(in.warnings, fmt.Errorf("annotation %s: Skip together with other hook types is ignored", AnnotationHook))
	}
	in.hook = true
	in.phases = phasesOf(others)
}

func (in *inspection) readHelmHook(value string) {
	entries := csv(value)
	if len(entries) == 0 {
		in.hookObject = true
		in.errs = append(in.errs, fmt.Errorf("annotation %s is empty", AnnotationHelmHook))
		in.badHook = true
		return
	}
	var types []HookType
	hook := false
	for _, e := range entries {
		t, known := helmHooks[e]
		if !known {
			in.errs = append(in.errs, fmt.Errorf("annotation %s: unknown Helm hook %q%s", AnnotationHelmHook, e, suggest(e, helmHookNames())))
			in.badHook = true
			continue
		}
		if e != "crd-install" {
			hook = true
		}
		if t != "" {
			types = append(types, t)
		}
	}
	in.hookObject = hook || in.badHook
	if in.badHook || !hook {
		// crd-install alone: a CRD Helm 2 installed first, synced as a
		// plain resource (CRDs come early anyway).
		return
	}
	if len(types) == 0 {
		in.leftOut = "Helm hook " + value + " is not run by a sync"
		return
	}
	in.hook = true
	in.phases = phasesOf(types)
}

func (in *inspection) readWave(ann map[string]string) {
	wave, err := parseWave(ann, AnnotationSyncWave)
	if err != nil {
		in.errs = append(in.errs, err)
	}
	weight, err := parseWave(ann, AnnotationHelmHookWeight)
	if err != nil {
		in.errs = append(in.errs, err)
	}
	if _, ok := ann[AnnotationSyncWave]; ok {
		in.wave = wave
	} else {
		in.wave = weight
	}
}

func parseWave(ann map[string]string, key string) (int, error) {
	v, ok := ann[key]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("annotation %s: %q is out of range", key, v)
		}
		return 0, fmt.Errorf("annotation %s: %q is not an integer", key, v)
	}
	return n, nil
}

// readPolicies reads both delete-policy annotations (Argo CD honours
// both at once). They only mean something on hooks.
func (in *inspection) readPolicies(ann map[string]string) {
	seen := map[DeletePolicy]bool{}
	for _, src := range []struct {
		key   string
		known map[string]DeletePolicy
	}{{AnnotationHookDeletePolicy, deletePolicies}, {AnnotationHelmHookDeletePolicy, helmDeletePolicies}} {
		v, ok := ann[src.key]
		if !ok {
			continue
		}
		for _, e := range csv(v) {
			p, known := src.known[e]
			if !known {
				in.errs = append(in.errs, fmt.Errorf("annotation %s: unknown delete policy %q%s", src.key, e, suggest(e, sortedKeys(src.known))))
				continue
			}
			seen[p] = true
		}
		if !in.hook && in.leftOut == "" && !in.badHook {
			in.warnings = append(in.warnings, fmt.Errorf("annotation %s has no effect on a resource that is not a hook", src.key))
		}
	}
	if !in.hook {
		return
	}
	for _, p := range policyOrder {
		if seen[p] {
			in.policies = append(in.policies, p)
		}
	}
	if len(in.policies) == 0 {
		in.policies = []DeletePolicy{DeleteBeforeHookCreation}
	}
}

// phasesOf maps hook types to phases, once each, in phase order.
func phasesOf(types []HookType) []Phase {
	var phases []Phase
	for _, t := range types {
		if p := Phase(t); !slices.Contains(phases, p) {
			phases = append(phases, p)
		}
	}
	slices.SortFunc(phases, func(a, b Phase) int { return phaseRank[a] - phaseRank[b] })
	return phases
}

// annotationsOf returns obj's annotations. Unlike GetAnnotations, which
// drops them all when one value is not a string (an unquoted
// `sync-wave: 1` in YAML), it names the bad key.
func annotationsOf(obj *unstructured.Unstructured) (map[string]string, error) {
	md, _ := obj.Object["metadata"].(map[string]any)
	raw, ok := md["annotations"]
	if !ok || raw == nil {
		return nil, nil
	}
	switch m := raw.(type) {
	case map[string]string:
		return m, nil
	case map[string]any:
		out := make(map[string]string, len(m))
		var errs []error
		for _, k := range sortedKeys(m) {
			s, ok := m[k].(string)
			if !ok {
				errs = append(errs, fmt.Errorf("annotation %s: value %v is not a string (quote it)", k, m[k]))
				continue
			}
			out[k] = s
		}
		return out, errors.Join(errs...)
	default:
		return nil, fmt.Errorf("metadata.annotations is not a map")
	}
}

// csv splits a comma-separated annotation value, trimming blanks and
// dropping empty entries.
func csv(v string) []string {
	var out []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

func hookNames() []string {
	names := make([]string, len(hookTypes))
	for i, t := range hookTypes {
		names[i] = string(t)
	}
	return names
}

func helmHookNames() []string { return sortedKeys(helmHooks) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
