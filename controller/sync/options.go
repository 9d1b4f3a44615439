package sync

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Permission says whether a resource may be pruned (the Prune option) or
// deleted with its application (the Delete option).
type Permission string

// The permissions, as written after "Prune=" or "Delete=".
const (
	// Allow is the default.
	Allow Permission = "true"
	// Deny keeps the resource.
	Deny Permission = "false"
	// Confirm waits for a person to approve.
	Confirm Permission = "confirm"
)

// SyncOptions are Argo CD's sync options, parsed. The zero value is not
// the default; start from DefaultSyncOptions.
type SyncOptions struct {
	// Prune (Prune=false|confirm) guards pruning of the resource.
	Prune Permission
	// Delete (Delete=false|confirm) guards deleting the resource with its
	// application; helm.sh/resource-policy: keep means Delete=false.
	Delete Permission
	// Validate (Validate=false) turns off schema validation on apply.
	Validate bool
	// SkipDryRunOnMissingResource skips the dry run when the resource's
	// type is not yet served.
	SkipDryRunOnMissingResource bool
	// ApplyOutOfSyncOnly applies only resources that differ from the
	// cluster; hooks and prunes still run.
	ApplyOutOfSyncOnly bool
	// PrunePropagationPolicy is how prunes delete dependents (Foreground
	// by default).
	PrunePropagationPolicy metav1.DeletionPropagation
	// PruneLast moves prunes after every other wave.
	PruneLast bool
	// Replace uses replace/create instead of apply.
	Replace bool
	// Force deletes and re-creates a resource that cannot be updated.
	Force bool
	// ServerSideApply applies server-side.
	ServerSideApply bool
	// ClientSideApplyMigration moves fields owned by client-side apply to
	// the server-side apply manager (on by default).
	ClientSideApplyMigration bool
	// FailOnSharedResource fails the sync when a resource belongs to
	// another application.
	FailOnSharedResource bool
	// RespectIgnoreDifferences applies ignoreDifferences to the desired
	// object before applying it.
	RespectIgnoreDifferences bool
	// CreateNamespace creates the destination namespace.
	CreateNamespace bool
}

// DefaultSyncOptions are the options of an application with none set.
func DefaultSyncOptions() SyncOptions {
	return SyncOptions{
		Prune:                    Allow,
		Delete:                   Allow,
		Validate:                 true,
		PrunePropagationPolicy:   metav1.DeletePropagationForeground,
		ClientSideApplyMigration: true,
	}
}

// optionSpec describes one option: its values and whether it means
// anything on a single resource.
type optionSpec struct {
	values  []string
	appOnly bool
	set     func(o *SyncOptions, value string)
}

// resourceOption and appOption mark where an option means something.
const (
	resourceOption = false
	appOption      = true
)

// boolOption is an option taking true or false.
func boolOption(field func(*SyncOptions) *bool, appOnly bool) optionSpec {
	return optionSpec{values: []string{"true", "false"}, appOnly: appOnly, set: func(o *SyncOptions, v string) {
		*field(o) = v == "true"
	}}
}

// permissionOption is an option taking true, false or confirm.
func permissionOption(field func(*SyncOptions) *Permission) optionSpec {
	return optionSpec{values: []string{"true", "false", "confirm"}, set: func(o *SyncOptions, v string) {
		*field(o) = Permission(v)
	}}
}

var propagationPolicies = map[string]metav1.DeletionPropagation{
	"foreground": metav1.DeletePropagationForeground,
	"background": metav1.DeletePropagationBackground,
	"orphan":     metav1.DeletePropagationOrphan,
}

// optionSpecs are the options Argo CD knows, by name (case-sensitive, as
// in Argo CD).
var optionSpecs = map[string]optionSpec{
	"Prune":                       permissionOption(func(o *SyncOptions) *Permission { return &o.Prune }),
	"Delete":                      permissionOption(func(o *SyncOptions) *Permission { return &o.Delete }),
	"Validate":                    boolOption(func(o *SyncOptions) *bool { return &o.Validate }, resourceOption),
	"SkipDryRunOnMissingResource": boolOption(func(o *SyncOptions) *bool { return &o.SkipDryRunOnMissingResource }, resourceOption),
	"ApplyOutOfSyncOnly":          boolOption(func(o *SyncOptions) *bool { return &o.ApplyOutOfSyncOnly }, resourceOption),
	"PruneLast":                   boolOption(func(o *SyncOptions) *bool { return &o.PruneLast }, resourceOption),
	"Replace":                     boolOption(func(o *SyncOptions) *bool { return &o.Replace }, resourceOption),
	"Force":                       boolOption(func(o *SyncOptions) *bool { return &o.Force }, resourceOption),
	"ServerSideApply":             boolOption(func(o *SyncOptions) *bool { return &o.ServerSideApply }, resourceOption),
	"RespectIgnoreDifferences":    boolOption(func(o *SyncOptions) *bool { return &o.RespectIgnoreDifferences }, resourceOption),
	"ClientSideApplyMigration":    boolOption(func(o *SyncOptions) *bool { return &o.ClientSideApplyMigration }, appOption),
	"FailOnSharedResource":        boolOption(func(o *SyncOptions) *bool { return &o.FailOnSharedResource }, appOption),
	"CreateNamespace":             boolOption(func(o *SyncOptions) *bool { return &o.CreateNamespace }, appOption),
	"PrunePropagationPolicy": {values: sortedKeys(propagationPolicies), appOnly: true, set: func(o *SyncOptions, v string) {
		o.PrunePropagationPolicy = propagationPolicies[v]
	}},
}

// ParseSyncOptions parses an application's sync options ("Name=value",
// as in spec.syncPolicy.syncOptions) over the defaults. Later entries win.
// Every bad entry is reported; an unknown name, a missing "=" or a value
// the option does not take is an error.
func ParseSyncOptions(entries []string) (SyncOptions, error) {
	o := DefaultSyncOptions()
	var errs []error
	for _, e := range entries {
		if _, err := o.set(e, false); err != nil {
			errs = append(errs, err)
		}
	}
	return o, errors.Join(errs...)
}

// withAnnotation returns o overridden by a resource's sync-options
// annotation value (comma-separated entries, blanks trimmed). Options that
// only mean something for a whole application are ignored and returned as
// warnings.
func (o SyncOptions) withAnnotation(value string) (SyncOptions, []error, []error) {
	var errs, warnings []error
	for e := range strings.SplitSeq(value, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		ignored, err := o.set(e, true)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("annotation %s: %w", AnnotationSyncOptions, err))
		case ignored:
			warnings = append(warnings, fmt.Errorf("annotation %s: %s applies to a whole application and has no effect on a resource", AnnotationSyncOptions, e))
		}
	}
	return o, errs, warnings
}

// set applies one "Name=value" entry. On a resource, application-only
// options are not applied and reported as ignored.
func (o *SyncOptions) set(entry string, resource bool) (ignored bool, err error) {
	name, value, ok := strings.Cut(strings.TrimSpace(entry), "=")
	if !ok {
		return false, fmt.Errorf("sync option %q: want Name=value", entry)
	}
	spec, known := optionSpecs[name]
	if !known {
		return false, fmt.Errorf("unknown sync option %q%s", name, suggest(name, optionNames()))
	}
	if !slices.Contains(spec.values, value) {
		return false, fmt.Errorf("sync option %s=%s: want %s", name, value, strings.Join(spec.values, " or "))
	}
	if resource && spec.appOnly {
		return true, nil
	}
	spec.set(o, value)
	return false, nil
}

func optionNames() []string {
	names := make([]string, 0, len(optionSpecs))
	for n := range optionSpecs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// suggest returns `; did you mean "X"?` when s matches one of known
// ignoring case, else the list of known values.
func suggest(s string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(s, k) {
			return fmt.Sprintf("; did you mean %q?", k)
		}
	}
	return " (known: " + strings.Join(known, ", ") + ")"
}

// NonDefault lists the options that differ from DefaultSyncOptions in
// "Name=value" form, sorted by name, as a user would write them.
func (o SyncOptions) NonDefault() []string { return o.Changed(DefaultSyncOptions()) }

// Changed lists the options that differ from base in "Name=value" form,
// sorted by name: given the application's options, what a resource's
// annotation changed.
func (o SyncOptions) Changed(base SyncOptions) []string {
	var out []string
	add := func(name string, v, b any) {
		if v != b {
			out = append(out, fmt.Sprintf("%s=%v", name, v))
		}
	}
	add("ApplyOutOfSyncOnly", o.ApplyOutOfSyncOnly, base.ApplyOutOfSyncOnly)
	add("ClientSideApplyMigration", o.ClientSideApplyMigration, base.ClientSideApplyMigration)
	add("CreateNamespace", o.CreateNamespace, base.CreateNamespace)
	add("Delete", o.Delete, base.Delete)
	add("FailOnSharedResource", o.FailOnSharedResource, base.FailOnSharedResource)
	add("Force", o.Force, base.Force)
	add("Prune", o.Prune, base.Prune)
	add("PruneLast", o.PruneLast, base.PruneLast)
	add("PrunePropagationPolicy", strings.ToLower(string(o.PrunePropagationPolicy)), strings.ToLower(string(base.PrunePropagationPolicy)))
	add("Replace", o.Replace, base.Replace)
	add("RespectIgnoreDifferences", o.RespectIgnoreDifferences, base.RespectIgnoreDifferences)
	add("ServerSideApply", o.ServerSideApply, base.ServerSideApply)
	add("SkipDryRunOnMissingResource", o.SkipDryRunOnMissingResource, base.SkipDryRunOnMissingResource)
	add("Validate", o.Validate, base.Validate)
	return out
}
