//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/reposervertest"
)

// startController runs a real application controller for the Applications
// of ns, writing its states where the API reads them, until the test ends.
func startController(t *testing.T, ns string) {
	t.Helper()
	repo, err := inproc.New(inproc.Options{WorkDir: t.TempDir(), AllowFileURLs: true})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := controller.New(controller.Config{
		RESTConfig: cluster.Config, Namespace: ns, Repo: repo, Resync: time.Hour,
		SyncWaveDelay: -1, SyncPollInterval: 200 * time.Millisecond, State: states,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
}

// missingNode is what the test reads of a tree node.
type missingNode struct {
	Kind, Name, UID, ResourceVersion string
	Missing                          bool
	Sync                             *string
	Health                           *struct{ Status string }
	CreatedAt                        *string
}

func (n missingNode) String() string {
	sync, health, created := "<nil>", "<nil>", "<nil>"
	if n.Sync != nil {
		sync = *n.Sync
	}
	if n.Health != nil {
		health = n.Health.Status
	}
	if n.CreatedAt != nil {
		created = *n.CreatedAt
	}
	return fmt.Sprintf("%s/%s missing=%t uid=%q sync=%s health=%s createdAt=%s resourceVersion=%q",
		n.Kind, n.Name, n.Missing, n.UID, sync, health, created, n.ResourceVersion)
}

// An application none of whose resources exist yet has them in its tree
// as missing nodes (OutOfSync, health Missing, no uid or creation time),
// as Argo CD's UI shows them; after a sync through the API the same
// resources are live nodes. A real controller compares and syncs.
func TestResourceTreeShowsMissingResources(t *testing.T) {
	t.Parallel()
	ns, dest := cluster.Namespace(t), cluster.Namespace(t)
	project := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "default"}}
	project.Spec.SourceRepos, project.Spec.Destinations = []string{"*"}, []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}}
	if err := kube.Create(t.Context(), project); err != nil {
		t.Fatal(err)
	}
	dir, _ := reposervertest.CommitFiles(t, map[string]string{
		"app/config.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: prod\n",
		"app/service.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
	})
	startController(t, ns)
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + dir, Path: "app", TargetRevision: "main"},
			Destination: v1alpha1.ApplicationDestination{Server: controller.InClusterServer, Namespace: dest},
		},
	}
	if err := kube.Create(t.Context(), app); err != nil {
		t.Fatal(err)
	}

	const q = `query($ns: String) { application(name: "later", namespace: $ns) {
	  resourceTree { nodes { kind name uid missing sync health { status } createdAt resourceVersion } } } }`
	tree := func() ([]missingNode, error) {
		var got struct {
			Application *struct {
				ResourceTree *struct{ Nodes []missingNode }
			}
		}
		data(t, q, map[string]any{"ns": ns}, &got)
		if got.Application == nil || got.Application.ResourceTree == nil {
			return nil, fmt.Errorf("no tree yet: %w", errNotYet)
		}
		return got.Application.ResourceTree.Nodes, nil
	}

	var nodes []missingNode
	eventually(t, "the tree lists the two missing resources", func() error {
		var err error
		if nodes, err = tree(); err != nil {
			return err
		}
		if len(nodes) != 2 {
			return fmt.Errorf("nodes %v: %w", nodes, errNotYet)
		}
		return nil
	})
	// Sorted by group, kind, namespace and name: ConfigMap before Service.
	for i, kind := range []string{"ConfigMap", "Service"} {
		n := nodes[i]
		if n.Kind != kind || !n.Missing || n.UID != "" || n.Sync == nil || *n.Sync != "OutOfSync" ||
			n.Health == nil || n.Health.Status != "Missing" || n.CreatedAt != nil || n.ResourceVersion != "" {
			t.Errorf("node %d = %v, want the %s missing: OutOfSync, health Missing, no uid, createdAt or resourceVersion", i, n, kind)
		}
	}

	var synced struct{ SyncApplication struct{ Name string } }
	data(t, `mutation($ns: String) { syncApplication(input: {application: {name: "later", namespace: $ns}}) { name } }`,
		map[string]any{"ns": ns}, &synced)

	eventually(t, "the synced resources are live nodes", func() error {
		var err error
		if nodes, err = tree(); err != nil {
			return err
		}
		if len(nodes) != 2 {
			return fmt.Errorf("nodes %v: %w", nodes, errNotYet)
		}
		for _, n := range nodes {
			if n.Missing || n.Sync == nil || *n.Sync != "Synced" {
				return fmt.Errorf("nodes %v: %w", nodes, errNotYet)
			}
		}
		return nil
	})
	for _, n := range nodes {
		if n.UID == "" || n.CreatedAt == nil || n.ResourceVersion == "" {
			t.Errorf("live node %v, want a uid, createdAt and resourceVersion", n)
		}
		if n.Kind == "Service" && (n.Health == nil || n.Health.Status != "Healthy") {
			t.Errorf("live Service %v, want Healthy", n)
		}
	}
}
