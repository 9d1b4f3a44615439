//go:build integration

package resolvers_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// An application's source hydrator, and what it last did, are in the
// graph as in the Application.
func TestApplicationSourceHydrator(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	hydrator := v1alpha1.SourceHydrator{
		DrySource:  v1alpha1.DrySource{RepoURL: "https://git.example.com/web.git", TargetRevision: "main", Path: "deploy"},
		SyncSource: v1alpha1.SyncSource{TargetBranch: "env/prod", Path: "web"},
		HydrateTo:  &v1alpha1.HydrateTo{TargetBranch: "env/prod-next"},
	}
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hydrated"},
		Spec: v1alpha1.ApplicationSpec{
			Project: "default", SourceHydrator: &hydrator,
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"},
		},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	started := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	app.Status.SourceHydrator = v1alpha1.SourceHydratorStatus{
		CurrentOperation: &v1alpha1.HydrateOperation{StartedAt: started, Phase: v1alpha1.HydrateOperationPhaseFailed,
			Message: "no repository-write Secret matches", DrySHA: "d2", SourceHydrator: hydrator},
		LastSuccessfulOperation: &v1alpha1.SuccessfulHydrateOperation{DrySHA: "d1", HydratedSHA: "h1", SourceHydrator: hydrator},
	}
	if err := kube.Status().Update(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	const q = `query($ns: String, $n: String!) { application(name: $n, namespace: $ns) {
  spec { sourceHydrator { drySource { repoURL targetRevision path } syncSource { targetBranch path } hydrateTo { targetBranch } } }
  status { sourceHydrator {
    currentOperation { phase message drySHA hydratedSHA startedAt finishedAt }
    lastSuccessfulOperation { drySHA hydratedSHA sourceHydrator { syncSource { targetBranch } } }
  } }
} }`
	want := map[string]any{"application": map[string]any{
		"spec": map[string]any{"sourceHydrator": map[string]any{
			"drySource":  map[string]any{"repoURL": "https://git.example.com/web.git", "targetRevision": "main", "path": "deploy"},
			"syncSource": map[string]any{"targetBranch": "env/prod", "path": "web"},
			"hydrateTo":  map[string]any{"targetBranch": "env/prod-next"},
		}},
		"status": map[string]any{"sourceHydrator": map[string]any{
			"currentOperation": map[string]any{"phase": "Failed", "message": "no repository-write Secret matches", "drySHA": "d2", "hydratedSHA": "",
				"startedAt": started.UTC().Format("2006-01-02T15:04:05Z07:00"), "finishedAt": nil},
			"lastSuccessfulOperation": map[string]any{"drySHA": "d1", "hydratedSHA": "h1", "sourceHydrator": map[string]any{"syncSource": map[string]any{"targetBranch": "env/prod"}}},
		}},
	}}
	eventually(t, "the hydrator status served", func() error {
		var got map[string]any
		data(t, q, map[string]any{"ns": ns, "n": "hydrated"}, &got)
		if diff := cmp.Diff(got, want); diff != "" {
			return fmt.Errorf("(-got +want):\n%s", diff)
		}
		return nil
	})
}
