package sync_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/sync"
)

// FuzzAnnotations: whatever the sync annotations say, Build does not
// panic, names the resource in every error, and keeps phases and waves in
// order.
func FuzzAnnotations(f *testing.F) {
	f.Add("PreSync", "-1", "HookSucceeded", "PruneLast=true", "pre-install", "-2", "hook-succeeded")
	f.Add("Skip,Sync", "+3", "", "Prune=false,CreateNamespace=true", "test", "x", "before-hook-creation,hook-failed")
	f.Add("", " 9223372036854775807 ", "Never,", ",,", "crd-install", "", "")
	f.Add("SyncFail,PreDelete", "-9223372036854775808", "BeforeHookCreation", "ServerSideApply=true,Replace", "post-delete,post-install", "0", "hook-succeeded")
	f.Fuzz(func(t *testing.T, hook, wave, policy, options, helmHook, weight, helmPolicy string) {
		ann := map[string]any{}
		for k, v := range map[string]string{
			sync.AnnotationHook: hook, sync.AnnotationSyncWave: wave, sync.AnnotationHookDeletePolicy: policy,
			sync.AnnotationSyncOptions: options, sync.AnnotationHelmHook: helmHook,
			sync.AnnotationHelmHookWeight: weight, sync.AnnotationHelmHookDeletePolicy: helmPolicy,
		} {
			if v != "" {
				ann[k] = v
			}
		}
		obj := func(kind, name string) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": kind,
				"metadata": map[string]any{"name": name, "namespace": "shop", "annotations": ann},
			}}
		}
		plain := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "shop"},
		}}
		desired := []*unstructured.Unstructured{obj("ConfigMap", "cfg"), plain}
		live := []*unstructured.Unstructured{obj("Secret", "old"), plain}
		plan, err := sync.Build(desired, live, sync.Options{Namespace: "shop", Prune: true, SyncOptions: []string{"CreateNamespace=true"}})
		if err != nil {
			t.Fatal(err)
		}
		checkOrdered(t, plan.Tasks)
		checkOrdered(t, plan.SyncFail)
		checkOrdered(t, plan.DeletionHooks)
		for _, e := range append(plan.Errors, plan.Warnings...) {
			if msg := e.Error(); !strings.HasPrefix(msg, "ConfigMap shop/cfg: ") && !strings.HasPrefix(msg, "Secret shop/old (live object): ") {
				t.Errorf("message does not start with the resource: %q", msg)
			}
		}
	})
}

// FuzzObject: Build does not panic on any JSON object, desired or live.
func FuzzObject(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","annotations":{"argocd.argoproj.io/sync-wave":"1"}}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"x"},"spec":{"group":3,"names":[]}}`))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":{"a":1},"annotations":null}}`))
	f.Add([]byte(`{"apiVersion":"a/b/c","kind":7,"metadata":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var m map[string]any
		if json.Unmarshal(data, &m) != nil || m == nil {
			return
		}
		obj := &unstructured.Unstructured{Object: m}
		other := obj.DeepCopy()
		plan, err := sync.Build([]*unstructured.Unstructured{obj}, []*unstructured.Unstructured{other, obj}, sync.Options{Namespace: "ns", Prune: true})
		if err != nil {
			t.Fatal(err)
		}
		checkOrdered(t, plan.Tasks)
	})
}
