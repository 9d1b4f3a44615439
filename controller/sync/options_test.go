package sync_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/controller/sync"
)

func TestParseSyncOptions(t *testing.T) {
	tests := []struct {
		entries []string
		want    func(o *sync.SyncOptions)
		err     string
	}{
		{entries: nil, want: func(*sync.SyncOptions) {}},
		{entries: []string{"Prune=false"}, want: func(o *sync.SyncOptions) { o.Prune = sync.Deny }},
		{entries: []string{"Prune=confirm"}, want: func(o *sync.SyncOptions) { o.Prune = sync.Confirm }},
		{entries: []string{"Delete=false"}, want: func(o *sync.SyncOptions) { o.Delete = sync.Deny }},
		{entries: []string{"Delete=confirm"}, want: func(o *sync.SyncOptions) { o.Delete = sync.Confirm }},
		{entries: []string{"Validate=false"}, want: func(o *sync.SyncOptions) { o.Validate = false }},
		{entries: []string{"SkipDryRunOnMissingResource=true"}, want: func(o *sync.SyncOptions) { o.SkipDryRunOnMissingResource = true }},
		{entries: []string{"ApplyOutOfSyncOnly=true"}, want: func(o *sync.SyncOptions) { o.ApplyOutOfSyncOnly = true }},
		{entries: []string{"PruneLast=true"}, want: func(o *sync.SyncOptions) { o.PruneLast = true }},
		{entries: []string{"Replace=true"}, want: func(o *sync.SyncOptions) { o.Replace = true }},
		{entries: []string{"Force=true"}, want: func(o *sync.SyncOptions) { o.Force = true }},
		{entries: []string{"ServerSideApply=true"}, want: func(o *sync.SyncOptions) { o.ServerSideApply = true }},
		{entries: []string{"ClientSideApplyMigration=false"}, want: func(o *sync.SyncOptions) { o.ClientSideApplyMigration = false }},
		{entries: []string{"FailOnSharedResource=true"}, want: func(o *sync.SyncOptions) { o.FailOnSharedResource = true }},
		{entries: []string{"RespectIgnoreDifferences=true"}, want: func(o *sync.SyncOptions) { o.RespectIgnoreDifferences = true }},
		{entries: []string{"CreateNamespace=true"}, want: func(o *sync.SyncOptions) { o.CreateNamespace = true }},
		{entries: []string{"PrunePropagationPolicy=background"}, want: func(o *sync.SyncOptions) {
			o.PrunePropagationPolicy = metav1.DeletePropagationBackground
		}},
		{entries: []string{"PrunePropagationPolicy=orphan"}, want: func(o *sync.SyncOptions) {
			o.PrunePropagationPolicy = metav1.DeletePropagationOrphan
		}},
		{entries: []string{" Replace=true ", "Replace=false"}, want: func(*sync.SyncOptions) {}},
		{entries: []string{"PrunePropagationPolicy=Foreground"}, err: "sync option PrunePropagationPolicy=Foreground: want background or foreground or orphan"},
		{entries: []string{"Validate=False"}, err: "sync option Validate=False: want true or false"},
		{entries: []string{"ServerSideApply"}, err: `sync option "ServerSideApply": want Name=value`},
		{entries: []string{"serverSideApply=true"}, err: `unknown sync option "serverSideApply"; did you mean "ServerSideApply"?`},
		{entries: []string{"Atomic=true"}, err: `unknown sync option "Atomic" (known: ApplyOutOfSyncOnly, ClientSideApplyMigration, CreateNamespace, Delete, FailOnSharedResource, Force, Prune, PruneLast, PrunePropagationPolicy, Replace, RespectIgnoreDifferences, ServerSideApply, SkipDryRunOnMissingResource, Validate)`},
		{entries: []string{"Force=1", "Replace=yes"}, err: "sync option Force=1: want true or false\nsync option Replace=yes: want true or false"},
	}
	for _, tt := range tests {
		got, err := sync.ParseSyncOptions(tt.entries)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseSyncOptions(%q) error %v, want %q", tt.entries, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseSyncOptions(%q): %v", tt.entries, err)
			continue
		}
		want := sync.DefaultSyncOptions()
		tt.want(&want)
		if d := cmp.Diff(got, want); d != "" {
			t.Errorf("ParseSyncOptions(%q) (-got +want):\n%s", tt.entries, d)
		}
	}
}

// A resource's annotation overrides the application's options in both
// directions; helm.sh/resource-policy: keep means Delete=false.
func TestResourceSyncOptions(t *testing.T) {
	desired := parse(t, `
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: shop
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: override
  namespace: shop
  annotations:
    argocd.argoproj.io/sync-options: ServerSideApply=false, Replace=true, Prune=confirm
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: shop
  annotations: {helm.sh/resource-policy: keep}
`)
	plan := build(t, desired, nil, sync.Options{SyncOptions: []string{"ServerSideApply=true", "PrunePropagationPolicy=orphan"}})
	app := sync.DefaultSyncOptions()
	app.ServerSideApply, app.PrunePropagationPolicy = true, metav1.DeletePropagationOrphan
	override := app
	override.ServerSideApply, override.Replace, override.Prune = false, true, sync.Confirm
	keep := app
	keep.Delete = sync.Deny
	got := map[string]sync.SyncOptions{}
	for _, task := range plan.Tasks {
		got[task.Name] = task.SyncOptions
	}
	if d := cmp.Diff(got, map[string]sync.SyncOptions{"plain": app, "override": override, "data": keep}); d != "" {
		t.Errorf("options (-got +want):\n%s", d)
	}
}

// Hooks keep generateName with an empty name.
func TestHookGenerateName(t *testing.T) {
	plan := build(t, load(t, "sync-waves-app.yaml"), nil, sync.Options{Namespace: "shop"})
	first := plan.Tasks[0]
	if first.Name != "" || first.GenerateName != "schema-upgrade-" || first.HookType != sync.HookPreSync {
		t.Errorf("first task: name %q, generateName %q, hook %q", first.Name, first.GenerateName, first.HookType)
	}
	if first.Desired.GetNamespace() != "shop" || first.Desired.GetGenerateName() != "schema-upgrade-" {
		t.Errorf("hook object: namespace %q, generateName %q", first.Desired.GetNamespace(), first.Desired.GetGenerateName())
	}
}

// NonDefault gives back what ParseSyncOptions read, one entry per option
// that differs from the default.
func TestNonDefault(t *testing.T) {
	entries := []string{
		"ApplyOutOfSyncOnly=true", "ClientSideApplyMigration=false", "CreateNamespace=true", "Delete=confirm",
		"FailOnSharedResource=true", "Force=true", "Prune=false", "PruneLast=true", "PrunePropagationPolicy=orphan",
		"Replace=true", "RespectIgnoreDifferences=true", "ServerSideApply=true", "SkipDryRunOnMissingResource=true",
		"Validate=false",
	}
	o, err := sync.ParseSyncOptions(entries)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(o.NonDefault(), entries); d != "" {
		t.Errorf("NonDefault (-got +want):\n%s", d)
	}
	if got := sync.DefaultSyncOptions().NonDefault(); got != nil {
		t.Errorf("defaults: NonDefault() = %q, want none", got)
	}
}

func TestDeletionApproved(t *testing.T) {
	start := time.Date(2026, 11, 30, 6, 0, 0, 500_000_000, time.UTC)
	for v, want := range map[string]bool{
		"2026-11-30T06:00:00Z":      true, // the same second: approves (annotations have seconds)
		"2026-11-30T07:00:00+01:00": true,
		"2026-11-30T06:01:00Z":      true,
		"2026-11-30T05:59:59Z":      false, // an approval from before the sync
		"yes":                       false,
		"":                          false,
	} {
		if got := sync.DeletionApproved(map[string]string{sync.AnnotationDeletionApproved: v}, start); got != want {
			t.Errorf("DeletionApproved(%q) = %v, want %v", v, got, want)
		}
	}
	if sync.DeletionApproved(nil, start) {
		t.Error("no annotation approved")
	}
}
