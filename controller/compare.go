package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/health"
)

// ResourceKey identifies an object in a destination cluster.
type ResourceKey = cache.ResourceKey

// KeyOf returns the key of obj.
func KeyOf(obj *unstructured.Unstructured) ResourceKey {
	gvk := obj.GroupVersionKind()
	return ResourceKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// ResourceResult is the comparison of one resource.
type ResourceResult struct {
	Key     ResourceKey
	Version string
	Status  v1alpha1.SyncStatusCode
	Health  *health.Result
	// Diff is the masked unified diff when the resource is out of sync.
	Diff string
	// RequiresPruning marks a live resource that Git no longer declares.
	RequiresPruning bool
}

// Comparison is the outcome of comparing an app's desired and live state.
type Comparison struct {
	Sync      v1alpha1.SyncStatusCode
	Health    health.Status
	Resources []ResourceResult
	Images    []string
	// Warnings become the app's warning conditions (repeated, shared,
	// excluded and orphaned resources), keyed by condition type.
	Warnings map[v1alpha1.ApplicationConditionType]string
	// Orphans are the orphaned resources of the destination namespace,
	// when the app's project monitors them.
	Orphans []ResourceKey
	// Revision is the commit (or chart version) compared.
	Revision   string
	SourceType v1alpha1.ApplicationSourceType

	predictions map[ResourceKey]prediction
}

// compareInput is what compare needs; the reconciler gathers it.
type compareInput struct {
	desired []*unstructured.Unstructured
	live    map[ResourceKey]*unstructured.Unstructured
	// predicted holds server-side diff dry runs: a key found there is
	// diffed server-side against its prediction instead of desired.
	predicted map[ResourceKey]prediction
	differ    *diff.Differ
	health    *health.Engine
}

// compare diffs each desired object with its live counterpart, judges the
// health of every live object, and rolls both up to the app.
func compare(ctx context.Context, in compareInput) (*Comparison, error) {
	c := &Comparison{Sync: v1alpha1.SyncStatusCodeSynced}
	seen := map[ResourceKey]bool{}
	var healths []health.Result
	images := map[string]bool{}
	add := func(key ResourceKey, version string, desired, live *unstructured.Unstructured) error {
		target, opts := desired, []diff.CallOption(nil)
		if p, ok := in.predicted[key]; ok && desired != nil {
			target, opts = p.obj, []diff.CallOption{diff.WithServerSide(true)}
		}
		res, err := in.differ.Diff(ctx, target, live, opts...)
		if err != nil {
			return fmt.Errorf("diff %s: %w", key, err)
		}
		r := ResourceResult{Key: key, Version: version, Status: v1alpha1.SyncStatusCodeSynced}
		if res.Modified {
			r.Status = v1alpha1.SyncStatusCodeOutOfSync
			r.Diff = res.Unified()
			c.Sync = v1alpha1.SyncStatusCodeOutOfSync
		}
		if live == nil {
			r.Health = &health.Result{Status: health.StatusMissing}
		} else {
			h, err := in.health.Check(ctx, live)
			if err != nil {
				h = &health.Result{Status: health.StatusUnknown, Message: err.Error()}
			}
			r.Health = h
			collectImages(live, images)
		}
		if desired == nil {
			r.RequiresPruning = true
		}
		if r.Health != nil && desired != nil {
			healths = append(healths, *r.Health)
		}
		c.Resources = append(c.Resources, r)
		return nil
	}
	for _, d := range in.desired {
		key := KeyOf(d)
		if seen[key] {
			continue // RepeatedResourceWarning is reported by the reconciler
		}
		seen[key] = true
		if err := add(key, d.GroupVersionKind().Version, d, in.live[key]); err != nil {
			return nil, err
		}
	}
	extra := make([]ResourceKey, 0)
	for key := range in.live {
		if !seen[key] {
			extra = append(extra, key)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].String() < extra[j].String() })
	for _, key := range extra {
		l := in.live[key]
		if err := add(key, l.GroupVersionKind().Version, nil, l); err != nil {
			return nil, err
		}
	}
	c.Health = health.Aggregate(healths)
	for im := range images {
		c.Images = append(c.Images, im)
	}
	slices.Sort(c.Images)
	sort.SliceStable(c.Resources, func(i, j int) bool { return c.Resources[i].Key.String() < c.Resources[j].Key.String() })
	return c, nil
}

// collectImages adds the container images of a workload to images.
func collectImages(obj *unstructured.Unstructured, images map[string]bool) {
	paths := [][]string{{"spec", "containers"}, {"spec", "initContainers"}, {"spec", "template", "spec", "containers"}, {"spec", "template", "spec", "initContainers"}, {"spec", "jobTemplate", "spec", "template", "spec", "containers"}}
	for _, p := range paths {
		list, _, _ := unstructured.NestedSlice(obj.Object, p...)
		for _, c := range list {
			if m, ok := c.(map[string]any); ok {
				if im, ok := m["image"].(string); ok && strings.TrimSpace(im) != "" {
					images[im] = true
				}
			}
		}
	}
}
