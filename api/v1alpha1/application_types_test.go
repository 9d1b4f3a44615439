package v1alpha1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// readFixture returns the bytes of a file in testdata.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestApplicationDecodesArgoCDManifest checks that an Argo CD Application
// manifest decodes strictly (every field is known) and survives a round
// trip through the Go type.
func TestApplicationDecodesArgoCDManifest(t *testing.T) {
	raw := readFixture(t, "application.yaml")

	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(raw, &app); err != nil {
		t.Fatalf("decode: %v", err)
	}

	// Spot-check fields whose names or types are easy to get wrong.
	if got, want := app.Spec.Source.Helm.Parameters[1].ForceString, true; got != want {
		t.Errorf("helm.parameters[1].forceString = %v, want %v", got, want)
	}
	if got, want := app.Spec.SyncPolicy.Retry.Limit, int64(5); got != want {
		t.Errorf("syncPolicy.retry.limit = %d, want %d", got, want)
	}
	if got, want := *app.Spec.SyncPolicy.Retry.Backoff.Factor, int64(2); got != want {
		t.Errorf("syncPolicy.retry.backoff.factor = %d, want %d", got, want)
	}
	if got, want := app.Spec.IgnoreDifferences[1].JQPathExpressions, []string{".webhooks[]?.clientConfig.caBundle"}; !cmp.Equal(got, want) {
		t.Errorf("ignoreDifferences[1].jqPathExpressions = %q, want %q", got, want)
	}
	var values map[string]any
	if err := json.Unmarshal(app.Spec.Source.Helm.ValuesObject.Raw, &values); err != nil {
		t.Fatalf("helm.valuesObject is not a JSON object: %v", err)
	}

	t.Run("round trip", func(t *testing.T) {
		out, err := yaml.Marshal(&app)
		if err != nil {
			t.Fatal(err)
		}
		var again v1alpha1.Application
		if err := yaml.UnmarshalStrict(out, &again); err != nil {
			t.Fatalf("decode encoded application: %v\n%s", err, out)
		}
		if diff := cmp.Diff(&again, &app); diff != "" {
			t.Errorf("application changed in round trip (-got +want):\n%s", diff)
		}
	})

	// Encoding the spec must give back exactly what the user wrote: no
	// field renamed, dropped or added. (Explicit false and zero values would
	// be omitted, so the fixture leaves them out.)
	t.Run("spec unchanged", func(t *testing.T) {
		var want struct {
			Spec map[string]any `json:"spec"`
		}
		if err := yaml.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(&app.Spec)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, want.Spec); diff != "" {
			t.Errorf("encoded spec differs from manifest (-got +want):\n%s", diff)
		}
	})
}

// TestApplicationDeepCopy checks that the generated DeepCopy shares no
// memory with the original, so controllers may mutate cached objects' copies.
func TestApplicationDeepCopy(t *testing.T) {
	var app v1alpha1.Application
	if err := yaml.UnmarshalStrict(readFixture(t, "application.yaml"), &app); err != nil {
		t.Fatal(err)
	}
	cp := app.DeepCopy()
	cp.Spec.Source.Helm.Parameters[0].Value = "changed"
	cp.Spec.SyncPolicy.SyncOptions[0] = "changed"
	cp.Spec.Source.Helm.ValuesObject.Raw[0] = ' '
	if app.Spec.Source.Helm.Parameters[0].Value == "changed" ||
		app.Spec.SyncPolicy.SyncOptions[0] == "changed" ||
		app.Spec.Source.Helm.ValuesObject.Raw[0] == ' ' {
		t.Error("DeepCopy shares memory with the original")
	}
}

// The sources an app compares and syncs: a source hydrator's sync source
// wins over sources, which win over source.
func TestEffectiveSources(t *testing.T) {
	one := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/a", Path: "a"}
	two := []v1alpha1.ApplicationSource{{RepoURL: "https://git.example.com/b"}, {RepoURL: "https://git.example.com/c"}}
	sh := &v1alpha1.SourceHydrator{
		DrySource:  v1alpha1.DrySource{RepoURL: "https://git.example.com/dry", TargetRevision: "main", Path: "base"},
		SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "apps/web"},
	}
	for _, tc := range []struct {
		name      string
		spec      v1alpha1.ApplicationSpec
		want      []v1alpha1.ApplicationSource
		wantMulti bool
	}{
		{"source", v1alpha1.ApplicationSpec{Source: &one}, []v1alpha1.ApplicationSource{one}, false},
		{"sources win", v1alpha1.ApplicationSpec{Source: &one, Sources: two}, two, true},
		{"hydrator wins", v1alpha1.ApplicationSpec{Source: &one, Sources: two, SourceHydrator: sh},
			[]v1alpha1.ApplicationSource{{RepoURL: "https://git.example.com/dry", TargetRevision: "env/prod", Path: "apps/web"}}, false},
		{"none", v1alpha1.ApplicationSpec{}, nil, false},
	} {
		got, multi := tc.spec.EffectiveSources()
		if !cmp.Equal(got, tc.want) || multi != tc.wantMulti {
			t.Errorf("%s: %+v multi=%v, want %+v multi=%v", tc.name, got, multi, tc.want, tc.wantMulti)
		}
	}
}
