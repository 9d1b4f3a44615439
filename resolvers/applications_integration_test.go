//go:build integration

package resolvers_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// appSpec describes a test Application.
type appSpec struct {
	name    string
	project string
	labels  map[string]string
	sync    v1alpha1.SyncStatusCode
	health  v1alpha1.HealthStatusCode
	auto    bool
}

// createApps creates the apps in ns with their status.
func createApps(t *testing.T, ns string, specs ...appSpec) {
	t.Helper()
	for _, s := range specs {
		app := &v1alpha1.Application{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name, Labels: s.labels},
			Spec: v1alpha1.ApplicationSpec{
				Project:     s.project,
				Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/apps.git", Path: s.name, TargetRevision: "main"},
				Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: s.name},
			},
		}
		if s.auto {
			app.Spec.SyncPolicy = &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{Prune: true}}
		}
		if err := kube.Create(t.Context(), app); err != nil {
			t.Fatalf("create %s: %v", s.name, err)
		}
		if s.sync != "" || s.health != "" {
			app.Status.Sync.Status, app.Status.Sync.Revision = s.sync, "0123456789abcdef0123456789abcdef01234567"
			app.Status.Health.Status = s.health
			app.Status.History = []v1alpha1.RevisionHistory{{ID: 1, Revision: app.Status.Sync.Revision, DeployedAt: metav1.Now()}}
			if err := kube.Status().Update(t.Context(), app); err != nil {
				t.Fatalf("status of %s: %v", s.name, err)
			}
		}
	}
}

// waitCount waits until the API lists n apps in ns.
func waitCount(t *testing.T, ns string, n int) {
	t.Helper()
	eventually(t, "apps listed", func() error {
		var got struct {
			Applications struct{ TotalCount int } `json:"applications"`
		}
		data(t, `query($ns: [String!]) { applications(first: 0, filter: {namespaces: $ns}) { totalCount } }`,
			map[string]any{"ns": []string{ns}}, &got)
		if got.Applications.TotalCount != n {
			return fmt.Errorf("%d apps listed, want %d", got.Applications.TotalCount, n)
		}
		return nil
	})
}

const pageQuery = `query($first: Int!, $after: String, $filter: ApplicationFilter, $order: ApplicationOrder) {
  applications(first: $first, after: $after, filter: $filter, orderBy: $order) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id name namespace project status { sync { status } health { status } } } }
  }
}`

type pageResult struct {
	Applications struct {
		TotalCount int
		PageInfo   struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
		Edges []struct {
			Cursor string
			Node   struct {
				ID, Name, Namespace, Project string
				Status                       struct {
					Sync   struct{ Status string }
					Health struct{ Status string }
				}
			}
		}
	}
}

func (p pageResult) names() []string {
	out := []string{}
	for _, e := range p.Applications.Edges {
		out = append(out, e.Node.Name)
	}
	return out
}

// allPages pages through the apps filter selects, size at a time.
func allPages(t *testing.T, size int, filter, order map[string]any) []string {
	t.Helper()
	var names []string
	vars := map[string]any{"first": size, "filter": filter, "order": order}
	for range 100 {
		var p pageResult
		data(t, pageQuery, vars, &p)
		names = append(names, p.names()...)
		if !p.Applications.PageInfo.HasNextPage {
			return names
		}
		vars["after"] = *p.Applications.PageInfo.EndCursor
	}
	t.Fatal("more than 100 pages")
	return nil
}

func TestApplicationsConnection(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var specs []appSpec
	for i := range 23 {
		s := appSpec{name: fmt.Sprintf("app-%02d", i), project: "default", sync: v1alpha1.SyncStatusCodeSynced, health: v1alpha1.HealthStatusHealthy}
		switch i % 4 {
		case 1:
			s.project, s.labels = "team-a", map[string]string{"team": "a"}
		case 2:
			s.health, s.sync = v1alpha1.HealthStatusDegraded, v1alpha1.SyncStatusCodeOutOfSync
		case 3:
			s.auto = true
		}
		specs = append(specs, s)
	}
	specs = append(specs, appSpec{name: "fresh"}) // never compared: Unknown
	createApps(t, ns, specs...)
	waitCount(t, ns, len(specs))
	// Statuses are written after the apps: wait until the API has them all.
	eventually(t, "statuses listed", func() error {
		var got struct {
			Applications struct{ TotalCount int } `json:"applications"`
		}
		data(t, `query($ns: [String!]) { applications(first: 0, filter: {namespaces: $ns, syncStatus: [Synced, OutOfSync]}) { totalCount } }`,
			map[string]any{"ns": []string{ns}}, &got)
		if got.Applications.TotalCount != len(specs)-1 {
			return fmt.Errorf("%d apps with a status", got.Applications.TotalCount)
		}
		return nil
	})
	inNS := map[string]any{"namespaces": []string{ns}}

	t.Run("pages join into the whole list", func(t *testing.T) {
		got := allPages(t, 5, inNS, nil)
		want := []string{}
		for _, s := range specs {
			want = append(want, s.name)
		}
		slices.Sort(want)
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("names (-got +want):\n%s", diff)
		}
	})
	t.Run("page info and node fields", func(t *testing.T) {
		var p pageResult
		data(t, pageQuery, map[string]any{"first": 3, "filter": inNS}, &p)
		a := p.Applications
		if a.TotalCount != 24 || !a.PageInfo.HasNextPage || a.PageInfo.HasPreviousPage || len(a.Edges) != 3 {
			t.Fatalf("first page: total %d next %v prev %v edges %d", a.TotalCount, a.PageInfo.HasNextPage, a.PageInfo.HasPreviousPage, len(a.Edges))
		}
		if *a.PageInfo.StartCursor != a.Edges[0].Cursor || *a.PageInfo.EndCursor != a.Edges[2].Cursor {
			t.Errorf("start/end cursors do not match the edges")
		}
		n := a.Edges[1].Node
		if n.Name != "app-01" || n.Namespace != ns || n.Project != "team-a" || n.Status.Health.Status != "Healthy" || n.ID == "" {
			t.Errorf("app-01 = %+v", n)
		}
	})
	t.Run("filters", func(t *testing.T) {
		tests := []struct {
			name   string
			filter map[string]any
			want   int
		}{
			{"project", map[string]any{"projects": []string{"team-a"}}, 6},
			{"health", map[string]any{"health": []string{"Degraded"}}, 6},
			{"sync unknown (never compared)", map[string]any{"syncStatus": []string{"Unknown"}}, 1},
			{"labels", map[string]any{"labelSelector": "team=a"}, 6},
			{"auto-sync", map[string]any{"autoSync": true}, 5},
			{"search", map[string]any{"search": "APP-1"}, 10},
			{"repo", map[string]any{"repos": []string{"https://GIT.example.com/apps"}}, 24},
			{"target revision", map[string]any{"targetRevisions": []string{"v2"}}, 0},
			{"destination namespace", map[string]any{"destinationNamespaces": []string{"app-07", "fresh"}}, 2},
			{"cluster", map[string]any{"clusters": []string{"https://kubernetes.default.svc"}}, 24},
			{"and", map[string]any{"health": []string{"Healthy"}, "projects": []string{"default"}}, 11},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				tt.filter["namespaces"] = []string{ns}
				got := allPages(t, 4, tt.filter, nil)
				if len(got) != tt.want {
					t.Errorf("%d apps %v, want %d", len(got), got, tt.want)
				}
			})
		}
	})
	t.Run("ordered by health, worst first", func(t *testing.T) {
		got := allPages(t, 7, inNS, map[string]any{"field": "HEALTH"})
		if !strings.HasPrefix(strings.Join(got, ","), "app-02,app-06,app-10,app-14,app-18,app-22,fresh,app-00") {
			t.Errorf("order = %v", got)
		}
	})
}

func TestApplicationPagesStableUnderChanges(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	var specs []appSpec
	for i := range 10 {
		specs = append(specs, appSpec{name: fmt.Sprintf("app-%02d", i)})
	}
	createApps(t, ns, specs...)
	waitCount(t, ns, len(specs))
	vars := map[string]any{"first": 4, "filter": map[string]any{"namespaces": []string{ns}}}
	var first pageResult
	data(t, pageQuery, vars, &first)

	// Between two pages: an app appears before the cursor, the app the
	// cursor names goes, and one appears after it.
	createApps(t, ns, appSpec{name: "app-00a"}, appSpec{name: "app-04a"})
	last := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-03"}}
	if err := kube.Delete(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	waitCount(t, ns, 11)

	vars["after"] = *first.Applications.PageInfo.EndCursor
	var second pageResult
	data(t, pageQuery, vars, &second)
	if diff := cmp.Diff(second.names(), []string{"app-04", "app-04a", "app-05", "app-06"}); diff != "" {
		t.Errorf("second page (-got +want):\n%s", diff)
	}
	if !second.Applications.PageInfo.HasPreviousPage || second.Applications.TotalCount != 11 {
		t.Errorf("second page info: %+v total %d", second.Applications.PageInfo, second.Applications.TotalCount)
	}
}

func TestApplicationAndNode(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	createApps(t, ns, appSpec{name: "guestbook", project: "frontend", labels: map[string]string{"tier": "frontend"},
		sync: v1alpha1.SyncStatusCodeOutOfSync, health: v1alpha1.HealthStatusProgressing, auto: true})
	waitHealth(t, ns, "guestbook", "Progressing") // the status is written after the app

	const q = `query($ns: String) {
  application(name: "guestbook", namespace: $ns) {
    id name uid project labels { key value } createdAt deleting yaml
    spec { source { repoURL path targetRevision } destination { server namespace }
      syncPolicy { automated { prune selfHeal enabled } } }
    status { sync { status revision } health { status } history { id revision deployedAt } }
  }
}`
	var got struct {
		Application struct {
			ID, Name, UID, Project, CreatedAt, YAML string
			Deleting                                bool
			Labels                                  []struct{ Key, Value string }
			Spec                                    struct {
				Source      struct{ RepoURL, Path, TargetRevision string }
				Destination struct{ Server, Namespace string }
				SyncPolicy  struct {
					Automated struct{ Prune, SelfHeal, Enabled bool }
				}
			}
			Status struct {
				Sync    struct{ Status, Revision string }
				Health  struct{ Status string }
				History []struct {
					ID       int
					Revision string
				}
			}
		}
	}
	data(t, q, map[string]any{"ns": ns}, &got)
	a := got.Application
	if a.Name != "guestbook" || a.Project != "frontend" || a.UID == "" || a.CreatedAt == "" || a.Deleting {
		t.Errorf("metadata: %+v", a)
	}
	if diff := cmp.Diff(a.Labels, []struct{ Key, Value string }{{"tier", "frontend"}}); diff != "" {
		t.Errorf("labels (-got +want):\n%s", diff)
	}
	if a.Spec.Source.Path != "guestbook" || a.Spec.Destination.Namespace != "guestbook" || !a.Spec.SyncPolicy.Automated.Enabled || !a.Spec.SyncPolicy.Automated.Prune {
		t.Errorf("spec: %+v", a.Spec)
	}
	if a.Status.Sync.Status != "OutOfSync" || a.Status.Health.Status != "Progressing" || len(a.Status.History) != 1 || a.Status.History[0].ID != 1 {
		t.Errorf("status: %+v", a.Status)
	}
	if !strings.Contains(a.YAML, "kind: Application") || !strings.Contains(a.YAML, "name: guestbook") || strings.Contains(a.YAML, "managedFields") {
		t.Errorf("yaml:\n%s", a.YAML)
	}

	// The ID fetches the same app through node.
	var byID struct {
		Node struct{ Name, Namespace string }
	}
	data(t, `query($id: ID!) { node(id: $id) { ... on Application { name namespace } } }`, map[string]any{"id": a.ID}, &byID)
	if byID.Node.Name != "guestbook" || byID.Node.Namespace != ns {
		t.Errorf("node = %+v", byID.Node)
	}

	// Missing apps are null, not errors.
	var missing struct{ Application *struct{ Name string } }
	data(t, `query($ns: String) { application(name: "nope", namespace: $ns) { name } }`, map[string]any{"ns": ns}, &missing)
	if missing.Application != nil {
		t.Errorf("missing app = %+v, want null", missing.Application)
	}
}

func TestApplicationsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    string
		vars map[string]any
		want string
	}{
		{"first above the cap", `{ applications(first: 501) { totalCount } }`, nil, "BAD_USER_INPUT"},
		{"negative first", `{ applications(first: -1) { totalCount } }`, nil, "BAD_USER_INPUT"},
		{"cursor not ours", `{ applications(after: "garbage") { totalCount } }`, nil, "BAD_USER_INPUT"},
		{"bad label selector", `{ applications(filter: {labelSelector: "a in (b"}) { totalCount } }`, nil, "BAD_USER_INPUT"},
		{"unknown enum literal", `{ applications(filter: {health: [Sick]}) { totalCount } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"unknown enum variable", `query($h: [HealthStatusCode!]) { applications(filter: {health: $h}) { totalCount } }`,
			map[string]any{"h": []string{"Sick"}}, "GRAPHQL_VALIDATION_FAILED"},
		{"invalid ID", `{ node(id: "not-an-id") { id } }`, nil, "BAD_USER_INPUT"},
		{"ID of an unknown kind", `{ node(id: "V2lkZ2V0Om5zL25hbWU") { id } }`, nil, "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorCode(t, tt.q, tt.vars); got != tt.want {
				t.Errorf("code = %q, want %q", got, tt.want)
			}
		})
	}
}
