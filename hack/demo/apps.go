package main

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/hack/demo/demorepo"
)

// namespace holds the demo's Applications and AppProject.
const namespace = "graphcd"

// sample is one demo Application: a directory of the demo repository
// deployed to its own namespace.
type sample struct {
	name, path string
	// auto turns on automated sync with prune and self-heal.
	auto bool
}

// samples are the Applications the demo creates, one per sample app.
var samples = []sample{
	{name: "guestbook", path: "guestbook", auto: true},
	{name: "hello-helm", path: "hello-helm"},
	{name: "hello-kustomize", path: "hello-kustomize/overlays/staging"},
	{name: "sync-waves", path: "sync-waves"},
}

// newClient returns a client for graphcd's own objects.
func newClient(cfg *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client for graphcd objects: %w", err)
	}
	return c, nil
}

// createApps creates the default AppProject, unless it exists, and one
// Application per sample, all pointing at repoURL.
func createApps(ctx context.Context, c client.Client, repoURL string) error {
	project := &v1alpha1.AppProject{
		ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: namespace},
		Spec: v1alpha1.AppProjectSpec{
			SourceRepos:              []string{"*"},
			Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
			ClusterResourceWhitelist: []metav1.GroupKind{{Group: "*", Kind: "*"}},
		},
	}
	if err := c.Create(ctx, project); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create AppProject default: %w", err)
	}
	for _, s := range samples {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: namespace},
			Spec: v1alpha1.ApplicationSpec{
				Project:     "default",
				Source:      &v1alpha1.ApplicationSource{RepoURL: repoURL, Path: s.path, TargetRevision: demorepo.Branch},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "demo-" + s.name},
				SyncPolicy:  &v1alpha1.SyncPolicy{SyncOptions: []string{"CreateNamespace=true"}},
			},
		}
		if s.auto {
			app.Spec.SyncPolicy.Automated = &v1alpha1.SyncPolicyAutomated{Prune: true, SelfHeal: true}
		}
		if err := c.Create(ctx, app); err != nil {
			return fmt.Errorf("create Application %s: %w", s.name, err)
		}
	}
	return nil
}
