package diff_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/diff"
)

func TestApplyIgnored(t *testing.T) {
	desired, live := loadPair(t, "hpa-replicas")
	withEnv := func(u *unstructured.Unstructured, env ...any) *unstructured.Unstructured {
		u = u.DeepCopy()
		c := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		c["env"] = env
		return u
	}
	envVar := func(name, value string) any { return map[string]any{"name": name, "value": value} }
	tests := []struct {
		name          string
		rule          diff.IgnoreRule
		desired, live *unstructured.Unstructured
		// want is applied to a copy of desired
		want func(obj map[string]any)
		// inSync: the rule covers every difference of the pair
		inSync bool
	}{
		{
			name: "pointer takes live's value", desired: desired, live: live,
			rule:   diff.IgnoreRule{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/replicas"}},
			want:   func(obj map[string]any) { obj["spec"].(map[string]any)["replicas"] = int64(7) },
			inSync: true,
		},
		{
			name: "manager-owned field takes live's value", desired: desired, live: live,
			rule:   diff.IgnoreRule{Group: "apps", Kind: "Deployment", ManagedFieldsManagers: []string{"kube-controller-manager"}},
			want:   func(obj map[string]any) { obj["spec"].(map[string]any)["replicas"] = int64(7) },
			inSync: true,
		},
		{
			name: "rule for another kind changes nothing", desired: desired, live: live,
			rule: diff.IgnoreRule{Kind: "Service", JSONPointers: []string{"/spec/replicas"}},
			want: func(map[string]any) {},
		},
		{
			name:    "jq element matched by content",
			desired: withEnv(desired, envVar("A", "git"), envVar("TOKEN", "from-git")),
			live:    withEnv(live, envVar("TOKEN", "rotated"), envVar("A", "git")),
			rule:    diff.IgnoreRule{Group: "apps", Kind: "Deployment", JQPathExpressions: []string{`.spec.template.spec.containers[].env[] | select(.name == "TOKEN") | .value`}},
			want: func(obj map[string]any) {
				c := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
				c["env"].([]any)[1].(map[string]any)["value"] = "rotated"
			},
		},
		{
			name: "ignored field live lacks is dropped", desired: desired, live: live,
			rule: diff.IgnoreRule{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/paused", "/spec/template/spec/containers/0/image"}},
			want: func(map[string]any) {},
		},
		{
			name:    "ignored field only in desired is dropped",
			desired: withEnv(desired, envVar("A", "1")), live: live,
			rule: diff.IgnoreRule{Group: "apps", Kind: "Deployment", JSONPointers: []string{"/spec/template/spec/containers/0/env"}},
			want: func(obj map[string]any) {
				c := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
				delete(c, "env")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDiffer(t, diff.Options{Ignore: []diff.IgnoreRule{tt.rule}})
			before := tt.desired.DeepCopy()
			got, err := d.ApplyIgnored(tt.desired, tt.live)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.desired.DeepCopy()
			tt.want(want.Object)
			if diffs := cmp.Diff(got.Object, want.Object); diffs != "" {
				t.Errorf("ApplyIgnored (-got +want):\n%s", diffs)
			}
			if diffs := cmp.Diff(tt.desired.Object, before.Object); diffs != "" {
				t.Errorf("desired mutated (-got +want):\n%s", diffs)
			}
			if !tt.inSync {
				return
			}
			// after applying, the ignored fields no longer differ
			res, err := d.Diff(t.Context(), got, tt.live, diff.VerdictOnly())
			if err != nil {
				t.Fatal(err)
			}
			if res.Modified {
				t.Error("Diff(ApplyIgnored(desired), live) still Modified")
			}
		})
	}
	d := newDiffer(t, diff.Options{})
	if got, err := d.ApplyIgnored(desired, nil); err != nil || !cmp.Equal(got.Object, desired.Object) {
		t.Errorf("ApplyIgnored(desired, nil) = %v, %v; want a copy of desired", got, err)
	}
}
