package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/health"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	cmA  = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {k: v}\n"
	cmA2 = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {k: changed}\n"
	cmB  = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: ns}\n"
	pod  = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {containers: [{name: c, image: 'nginx:1.27'}]}\nstatus: {phase: Running, conditions: [{type: Ready, status: 'True'}], containerStatuses: [{name: c, ready: true, state: {running: {}}}]}\n"
)

func TestCompare(t *testing.T) {
	differ, err := diff.New(diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := health.New(health.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		desired    []string
		live       []string
		wantSync   v1alpha1.SyncStatusCode
		wantHealth health.Status
		wantPrune  int
		wantImages int
	}{
		{"equal", []string{cmA}, []string{cmA}, v1alpha1.SyncStatusCodeSynced, health.StatusHealthy, 0, 0},
		{"changed", []string{cmA2}, []string{cmA}, v1alpha1.SyncStatusCodeOutOfSync, health.StatusHealthy, 0, 0},
		{"missing", []string{cmA}, nil, v1alpha1.SyncStatusCodeOutOfSync, health.StatusMissing, 0, 0},
		{"extraneous", []string{cmA}, []string{cmA, cmB}, v1alpha1.SyncStatusCodeOutOfSync, health.StatusHealthy, 1, 0},
		{"pod", []string{pod}, []string{pod}, v1alpha1.SyncStatusCodeSynced, health.StatusHealthy, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := compareInput{differ: differ, health: engine, live: map[ResourceKey]*unstructured.Unstructured{}}
			for _, d := range tc.desired {
				in.desired = append(in.desired, obj(t, d))
			}
			for _, l := range tc.live {
				o := obj(t, l)
				in.live[KeyOf(o)] = o
			}
			c, err := compare(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			prune := 0
			for _, r := range c.Resources {
				if r.RequiresPruning {
					prune++
				}
				if r.Status == v1alpha1.SyncStatusCodeOutOfSync && r.Diff == "" {
					t.Errorf("%s is OutOfSync without a diff", r.Key)
				}
			}
			if c.Sync != tc.wantSync || c.Health != tc.wantHealth || prune != tc.wantPrune || len(c.Images) != tc.wantImages {
				t.Errorf("got sync %s health %s prune %d images %v; want %s %s %d %d", c.Sync, c.Health, prune, c.Images, tc.wantSync, tc.wantHealth, tc.wantPrune, tc.wantImages)
			}
		})
	}
}
