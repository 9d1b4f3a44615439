//go:build integration

package controller_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

// appStates is the store TestMain's controller writes application states
// into.
var appStates = appstate.NewMemory()

// waitAppState polls the store until cond holds for the app's state.
func waitAppState(t *testing.T, name, what string, cond func(*appstate.State) bool) *appstate.State {
	t.Helper()
	var st *appstate.State
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		st, err = appStates.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name})
		return st != nil && cond(st), err
	})
	if err != nil {
		b, _ := json.MarshalIndent(st, "", "  ")
		t.Fatalf("state of %s never %s: %v\nstate:\n%s", name, what, err, b)
	}
	return st
}

func findNode(st *appstate.State, kind string) []appstate.Node {
	var out []appstate.Node
	for _, n := range st.Tree {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

func findManaged(st *appstate.State, kind string) *appstate.ManagedResource {
	for i := range st.Managed {
		if st.Managed[i].Kind == kind {
			return &st.Managed[i]
		}
	}
	return nil
}

func infoValue(n appstate.Node, name string) string {
	for _, i := range n.Info {
		if i.Name == name {
			return i.Value
		}
	}
	return ""
}

// The controller writes the tree (Deployment -> ReplicaSet -> Pods, with
// pod info) and the managed resources (YAML, masked diffs) of a
// Deployment app, follows a live edit, and deletes the state with the app.
func TestAppStateWritten(t *testing.T) {
	t.Parallel()
	const name = "state-app"
	const gitValue, liveValue = "git-state-s3cr3t", "live-state-h4x0r"
	secret := func(ns, value string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: %[1]s\n  annotations: {argocd.argoproj.io/tracking-id: \"%[2]s:/Secret:%[1]s/creds\"}\ntype: Opaque\ndata:\n  password: %[3]s\n",
			ns, name, base64.StdEncoding.EncodeToString([]byte(value)))
	}
	dest, app := newApp(t, name, map[string]string{
		"app/deploy.yaml": deployment("DEST", name),
		"app/secret.yaml": secret("DEST", gitValue),
	})
	// Before anything exists: two missing resources, in the tree as
	// missing nodes.
	st := waitAppState(t, name, "lists two missing resources", func(st *appstate.State) bool { return len(st.Managed) == 2 })
	for _, m := range st.Managed {
		if m.Status != v1alpha1.SyncStatusCodeOutOfSync || m.Health == nil || m.Health.Status != v1alpha1.HealthStatusMissing || m.Live != "" || m.Desired == "" {
			t.Errorf("missing %s = %+v", m.Kind, m)
		}
	}
	if len(st.Tree) != 2 {
		t.Errorf("tree of an app with nothing live = %+v, want its two resources as missing nodes", st.Tree)
	}
	for _, n := range st.Tree {
		if !n.Missing || n.UID != "" || n.CreatedAt != nil || n.Sync != v1alpha1.SyncStatusCodeOutOfSync || n.Health == nil || n.Health.Status != v1alpha1.HealthStatusMissing {
			t.Errorf("missing node %s = %+v", n.Kind, n)
		}
	}
	apply(t, deployment(dest, name), secret(dest, liveValue))

	st = waitAppState(t, name, "holds a Deployment with a ReplicaSet and two Running pods, and the live Secret", func(st *appstate.State) bool {
		if s := findManaged(st, "Secret"); s == nil || s.Live == "" {
			return false
		}
		pods := findNode(st, "Pod")
		if len(findNode(st, "ReplicaSet")) != 1 || len(pods) != 2 {
			return false
		}
		for _, p := range pods {
			if infoValue(p, "Status Reason") != "Running" {
				return false
			}
		}
		return true
	})
	deploy, rs, pods := findNode(st, "Deployment"), findNode(st, "ReplicaSet")[0], findNode(st, "Pod")
	if len(deploy) != 1 {
		t.Fatalf("tree has %d Deployments, want 1", len(deploy))
	}
	d := deploy[0]
	if d.Group != "apps" || d.Version != "v1" || d.UID == "" || d.Sync != v1alpha1.SyncStatusCodeSynced || d.Health == nil ||
		len(d.ParentRefs) != 0 || len(d.Images) != 1 || d.Images[0] != "nginx:1.27" || d.ResourceVersion == "" || d.CreatedAt == nil || d.CreatedAt.IsZero() || d.Missing {
		t.Errorf("Deployment node = %+v", d)
	}
	if len(rs.ParentRefs) != 1 || rs.ParentRefs[0].UID != d.UID || rs.ParentRefs[0].Kind != "Deployment" || rs.ParentRefs[0].Name != "web" {
		t.Errorf("ReplicaSet parents = %+v, want the Deployment (uid %s)", rs.ParentRefs, d.UID)
	}
	if rs.Sync != "" || rs.Health == nil || infoValue(rs, "Revision") == "" {
		t.Errorf("ReplicaSet node = %+v, want health, a revision and no sync status", rs)
	}
	for _, p := range pods {
		if len(p.ParentRefs) != 1 || p.ParentRefs[0].UID != rs.UID {
			t.Errorf("Pod %s parents = %+v, want the ReplicaSet (uid %s)", p.Name, p.ParentRefs, rs.UID)
		}
		if p.Version != "v1" || p.Health == nil || len(p.Images) != 1 || infoValue(p, "Containers") == "" || infoValue(p, "Restart Count") == "" {
			t.Errorf("Pod node = %+v", p)
		}
	}
	if st.Revision == "" || st.ReconciledAt.IsZero() {
		t.Errorf("state revision %q, reconciledAt %v", st.Revision, st.ReconciledAt)
	}

	md := findManaged(st, "Deployment")
	if md == nil || md.Status != v1alpha1.SyncStatusCodeSynced || md.Diff != "" || md.Health == nil ||
		!strings.Contains(md.Live, "kind: Deployment") || !strings.Contains(md.Live, "status:") ||
		!strings.Contains(md.Desired, `image: "nginx:1.27"`) || strings.Contains(md.Live, "managedFields") {
		t.Errorf("managed Deployment = %+v", md)
	}
	ms := findManaged(st, "Secret")
	if ms == nil || ms.Status != v1alpha1.SyncStatusCodeOutOfSync || !strings.Contains(ms.Diff, "password") ||
		!strings.Contains(ms.Live, `password: "++++++++`) || !strings.Contains(ms.Desired, `password: "++++++++`) {
		t.Errorf("managed Secret = %+v, want OutOfSync with masked values and a diff naming password", ms)
	}
	assertNoSecretValues(t, st, gitValue, liveValue)

	scaleWeb(t, dest, 3)
	st = waitAppState(t, name, "reports the scaled Deployment OutOfSync", func(st *appstate.State) bool {
		md := findManaged(st, "Deployment")
		return md != nil && md.Status == v1alpha1.SyncStatusCodeOutOfSync
	})
	md = findManaged(st, "Deployment")
	if !strings.Contains(md.Diff, "replicas: 3") || !strings.Contains(md.Diff, "replicas: 2") {
		t.Errorf("diff after scaling:\n%s\nwant replicas 3 -> 2", md.Diff)
	}
	if !strings.Contains(md.Live, "replicas: 3") {
		t.Errorf("live YAML after scaling does not hold replicas: 3:\n%s", md.Live)
	}
	assertNoSecretValues(t, st, gitValue, liveValue)

	if err := apps.Delete(t.Context(), app); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		st, err := appStates.Get(ctx, types.NamespacedName{Namespace: appNamespace, Name: name})
		return st == nil, err
	})
	if err != nil {
		t.Fatalf("state still stored after the app was deleted: %v", err)
	}
}

// assertNoSecretValues fails when any form of the values appears anywhere
// in the state.
func assertNoSecretValues(t *testing.T, st *appstate.State, values ...string) {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(string(b), form) {
				t.Errorf("state holds %q:\n%s", form, b)
			}
		}
	}
}
