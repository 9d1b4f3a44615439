//go:build integration

package console

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// guardedSet is an ApplicationSet of ns in project locked, which does not
// exist: the controller reports the error.
const guardedSet = `apiVersion: graphcd.io/v1alpha1
kind: ApplicationSet
metadata: {name: guarded, namespace: %s}
spec:
  generators:
  - list: {elements: [{env: dev}]}
  template:
    metadata: {name: 'guarded-{{env}}'}
    spec:
      project: locked
      source: {repoURL: %s, path: app, targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
`

// rollingSet is an ApplicationSet of ns rolling out its dev Application
// before its prod one, each deploying its own directory of repo.
const rollingSet = `apiVersion: graphcd.io/v1alpha1
kind: ApplicationSet
metadata: {name: rolling, namespace: %s}
spec:
  generators:
  - list: {elements: [{env: dev}, {env: prod}]}
  strategy:
    type: RollingSync
    rollingSync:
      steps:
      - matchExpressions: [{key: env, operator: In, values: [dev]}]
      - matchExpressions: [{key: env, operator: In, values: [prod]}]
  template:
    metadata:
      name: 'rolling-{{env}}'
      labels: {env: '{{env}}'}
    spec:
      project: default
      source: {repoURL: %s, path: '{{env}}', targetRevision: main}
      destination: {server: https://kubernetes.default.svc, namespace: %s}
`

// TestApplicationSetPages drives the ApplicationSet pages in Chromium
// against a server running its controller: a set with a list generator
// of two elements is previewed (a duplicate element shown failing first),
// created, seen with the two Applications the controller generates, given
// a third element through its editor (previewed, saved, its Application
// seen), and deleted; a set RBAC keeps admin from changing shows its error and no
// Edit or Delete; a RollingSync shows its two steps with the Application
// of each as the controller rolls it out, up to Healthy (see
// web/e2e/appsets.mjs). The cluster then has neither
// the set nor its Applications.
func TestApplicationSetPages(t *testing.T) {
	if skipReason != "" {
		t.Skip("browser test skipped: " + skipReason)
	}
	base, ns := startServer(t, true, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "graphcd-rbac-cm"},
		Data: map[string]string{"policy.csv": "p, admin, applicationsets, update, locked/*, deny\n" +
			"p, admin, applicationsets, delete, locked/*, deny\n"},
	})
	kube := newKube(t)
	ensureDefaultProject(t, kube, ns)
	repo := serveRepo(t, map[string]string{
		"app/configmap.yaml":  configMap("app", "hello", ""),
		"dev/configmap.yaml":  configMap("dev", "hello", ""),
		"prod/configmap.yaml": configMap("prod", "hello", ""),
	})
	for _, manifest := range []string{guardedSet, rollingSet} {
		set := &v1alpha1.ApplicationSet{}
		if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(manifest, ns, repo, ns)), set); err != nil {
			t.Fatal(err)
		}
		if err := kube.Create(t.Context(), set); err != nil {
			t.Fatal(err)
		}
	}

	runScript(t, "e2e/appsets.mjs", base, ns, "GRAPHCD_E2E_REPO="+repo, "GRAPHCD_E2E_NS="+ns)

	gone := []client.Object{
		&v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet"}},
		&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet-dev"}},
		&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet-prod"}},
		&v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fleet-stage"}},
	}
	deadline := time.Now().Add(time.Minute)
	for _, obj := range gone {
		for {
			err := kube.Get(t.Context(), client.ObjectKeyFromObject(obj), obj)
			if apierrors.IsNotFound(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%T %s still there a minute after the set's deletion (get: %v)", obj, obj.GetName(), err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
}
