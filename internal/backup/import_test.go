package backup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// replace takes the file's labels, annotations, finalizers and fields and
// keeps the server's metadata, the status, a running operation and
// kubectl's annotation; same then sees no difference from the file.
func TestReplace(t *testing.T) {
	live := decode(t, `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: graphcd
  uid: "1234"
  resourceVersion: "99"
  ownerReferences: [{apiVersion: graphcd.io/v1alpha1, kind: ApplicationSet, name: s, uid: "5"}]
  labels: {team: b, extra: x}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
spec: {project: other, revisionHistoryLimit: 3}
added: {by: someone}
operation: {sync: {}}
status: {sync: {status: Synced}}
`)
	file := decode(t, `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: graphcd
  labels: {team: a}
  finalizers: [resources-finalizer.graphcd.io]
spec: {project: default}
`)
	want := decode(t, `apiVersion: graphcd.io/v1alpha1
kind: Application
metadata:
  name: web
  namespace: graphcd
  uid: "1234"
  resourceVersion: "99"
  ownerReferences: [{apiVersion: graphcd.io/v1alpha1, kind: ApplicationSet, name: s, uid: "5"}]
  labels: {team: a}
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
  finalizers: [resources-finalizer.graphcd.io]
spec: {project: default}
operation: {sync: {}}
status: {sync: {status: Synced}}
`)
	got := replace(live, file)
	if d := cmp.Diff(got.Object, want.Object); d != "" {
		t.Errorf("replace (-got +want):\n%s", d)
	}
	if same(live, got) {
		t.Error("same(live, replaced) = true, want the change seen")
	}
	if !same(got, file) {
		t.Error("same(replaced, file) = false, want a second import to find nothing to do")
	}
}
