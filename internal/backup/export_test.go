package backup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// clean keeps what the owner wrote and drops the server's bookkeeping,
// owner references, an app's status and operation, and kubectl's copy of
// the object.
func TestClean(t *testing.T) {
	for _, tc := range []struct{ name, live, want string }{{
		name: "application in graphcd's namespace",
		live: `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: graphcd
  uid: 1234
  resourceVersion: "99"
  generation: 4
  creationTimestamp: "2026-01-01T00:00:00Z"
  managedFields: [{manager: kubectl}]
  ownerReferences: [{apiVersion: graphcd.io/v1alpha1, kind: ApplicationSet, name: s, uid: "5"}]
  labels: {team: a}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}", note: kept}
  finalizers: [resources-finalizer.graphcd.io]
spec: {project: default}
operation: {sync: {}}
status: {sync: {status: Synced}}
`,
		want: `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: web
  labels: {team: a}
  annotations: {note: kept}
  finalizers: [resources-finalizer.graphcd.io]
spec: {project: default}
`,
	}, {
		name: "application elsewhere keeps its namespace",
		live: "apiVersion: graphcd.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: team-a}\nspec: {}\n",
		want: "apiVersion: graphcd.io/v1alpha1\nkind: Application\nmetadata: {name: web, namespace: team-a}\nspec: {}\n",
	}, {
		name: "secret loses kubectl's copy of its data",
		live: `apiVersion: v1
kind: Secret
metadata:
  name: repo
  namespace: graphcd
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{\"data\":{\"password\":\"c2VjcmV0\"}}"}
type: Opaque
data: {password: c2VjcmV0}
`,
		want: "apiVersion: v1\nkind: Secret\nmetadata: {name: repo}\ntype: Opaque\ndata: {password: c2VjcmV0}\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := clean(decode(t, tc.live), "graphcd")
			if d := cmp.Diff(got.Object, decode(t, tc.want).Object); d != "" {
				t.Errorf("clean (-got +want):\n%s", d)
			}
		})
	}
}

func decode(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}
