//go:build integration

package deploy_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/internal/bootstrap"
	"github.com/graphcd/graphcd/internal/testenv/install"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full, Nodes: 2}, &cluster, func(*localcluster.Cluster) (func(), error) {
		var err error
		binDir, err = os.MkdirTemp("", "graphcd-deploy-test-")
		return func() { _ = os.RemoveAll(binDir) }, err
	}))
}

// fieldManager applies the manifests, as `kubectl apply --server-side`
// would under its own name.
const fieldManager = "graphcd-deploy-test"

// readyTimeout bounds the wait for every workload of a set.
const readyTimeout = 3 * time.Minute

// access is one question to the cluster's authorizer: may the
// ServiceAccount sa of the set do verb on resource?
type access struct {
	sa                               string
	verb, group, resource, sub, name string
	// namespace is "" for a cluster-scoped question, "own" for the set's
	// namespace, anything else as it is.
	namespace string
	allowed   bool
}

func TestInstall(t *testing.T) {
	t.Parallel()
	ns := applySet(t, "install", nil, []string{
		"CustomResourceDefinition/applications.graphcd.io",
		"CustomResourceDefinition/applicationsets.graphcd.io",
		"CustomResourceDefinition/appprojects.graphcd.io",
		"ServiceAccount/graphcd-server",
		"ClusterRole/graphcd-server",
		"ClusterRoleBinding/graphcd-server",
		"ConfigMap/graphcd-cm",
		"ConfigMap/graphcd-rbac-cm",
		"Secret/graphcd-secret",
		"Service/graphcd-server",
		"Deployment/graphcd-server",
	})
	checkAccess(t, ns, []access{
		// The controller in the process applies anything anywhere.
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "delete", group: "rbac.authorization.k8s.io", resource: "clusterroles", allowed: true},
		{sa: "graphcd-server", verb: "update", group: "graphcd.io", resource: "applications", sub: "status", namespace: "own", allowed: true},
	})
	runAs(t, ns, "graphcd-server", both(serverReady, defaultProjectIn(ns)), "server", "--listen", "127.0.0.1:0")
}

// TestInstallChatops applies deploy/install with the chat bot's component
// as its comment tells, with the Secret it needs: the restricted Pod
// Security profile admits the bot's Pod, which becomes ready, and its
// default ServiceAccount may do nothing.
func TestInstallChatops(t *testing.T) {
	t.Parallel()
	secret := func(string) string {
		return `secretGenerator:
- name: graphcd-chatops
  options: {disableNameSuffixHash: true, labels: {app.kubernetes.io/part-of: graphcd, app.kubernetes.io/name: graphcd-chatops, app.kubernetes.io/component: chatops}}
  literals: [token=t, signing-secret=s, webhook-url=https://hooks.example.com/x]
`
	}
	ns := applySet(t, "testdata/install-chatops", secret, []string{
		"CustomResourceDefinition/applications.graphcd.io",
		"CustomResourceDefinition/applicationsets.graphcd.io",
		"CustomResourceDefinition/appprojects.graphcd.io",
		"ServiceAccount/graphcd-server",
		"ClusterRole/graphcd-server",
		"ClusterRoleBinding/graphcd-server",
		"ConfigMap/graphcd-chatops-cm",
		"ConfigMap/graphcd-cm",
		"ConfigMap/graphcd-rbac-cm",
		"Secret/graphcd-secret",
		"Service/graphcd-chatops",
		"Service/graphcd-server",
		"Deployment/graphcd-chatops",
		"Deployment/graphcd-server",
	})
	checkAccess(t, ns, []access{
		{sa: "default", verb: "get", resource: "secrets", namespace: "own", allowed: false},
		{sa: "default", verb: "list", group: "graphcd.io", resource: "applications", namespace: "own", allowed: false},
	})
}

func TestNamespaceInstall(t *testing.T) {
	t.Parallel()
	// As docs/install.md says: in another namespace, the in-cluster
	// Secret must name it.
	patch := func(ns string) string {
		return `patches:
- target: {kind: Secret, name: graphcd-in-cluster}
  patch: |-
    - op: replace
      path: /stringData/namespaces
      value: ` + ns + "\n"
	}
	// The set holds no CRDs: a cluster administrator applies them first,
	// as docs/install.md says. Without this the test depended on another
	// set's having applied them.
	apply(t, kustomize(t, "crds"))
	ns := applySet(t, "namespace-install", patch, []string{
		"ServiceAccount/graphcd-server",
		"Role/graphcd-server",
		"ClusterRole/graphcd-server-crds",
		"RoleBinding/graphcd-server",
		"ClusterRoleBinding/graphcd-server-crds",
		"ConfigMap/graphcd-cm",
		"ConfigMap/graphcd-rbac-cm",
		"Secret/graphcd-in-cluster",
		"Secret/graphcd-secret",
		"Service/graphcd-server",
		"Deployment/graphcd-server",
	})
	checkAccess(t, ns, []access{
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "update", group: "graphcd.io", resource: "applications", sub: "status", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: false},
		{sa: "graphcd-server", verb: "list", resource: "secrets", namespace: "default", allowed: false},
		{sa: "graphcd-server", verb: "list", resource: "namespaces", allowed: false},
		{sa: "graphcd-server", verb: "get", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "applications.graphcd.io", allowed: true},
		{sa: "graphcd-server", verb: "get", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "appprojects.graphcd.io", allowed: true},
		{sa: "graphcd-server", verb: "get", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "applicationsets.graphcd.io", allowed: true},
		{sa: "graphcd-server", verb: "list", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", allowed: false},
		{sa: "graphcd-server", verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "applications.graphcd.io", allowed: false},
	})
	runAs(t, ns, "graphcd-server", both(serverReady, defaultProjectIn(ns)), "server", "--listen", "127.0.0.1:0")
	sec, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), "graphcd-in-cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(sec.Data["namespaces"]); got != ns {
		t.Errorf("graphcd-in-cluster namespaces = %q, want %q", got, ns)
	}
	t.Run("end to end", func(t *testing.T) { namespaceInstallEndToEnd(t, ns) })
}

func TestHA(t *testing.T) {
	t.Parallel()
	ns := applySet(t, "ha", nil, []string{
		"CustomResourceDefinition/applications.graphcd.io",
		"CustomResourceDefinition/applicationsets.graphcd.io",
		"CustomResourceDefinition/appprojects.graphcd.io",
		"ServiceAccount/graphcd-controller",
		"ServiceAccount/graphcd-redis",
		"ServiceAccount/graphcd-repo-server",
		"ServiceAccount/graphcd-secret-init",
		"ServiceAccount/graphcd-server",
		"Role/graphcd-secret-init",
		"Role/graphcd-server",
		"ClusterRole/graphcd-controller",
		"ClusterRole/graphcd-server",
		"RoleBinding/graphcd-secret-init",
		"RoleBinding/graphcd-server",
		"ClusterRoleBinding/graphcd-controller",
		"ClusterRoleBinding/graphcd-server",
		"ConfigMap/graphcd-cm",
		"ConfigMap/graphcd-rbac-cm",
		"Secret/graphcd-secret",
		"Service/graphcd-controller",
		"Service/graphcd-redis",
		"Service/graphcd-repo-server",
		"Service/graphcd-server",
		"Deployment/graphcd-redis",
		"Deployment/graphcd-repo-server",
		"Deployment/graphcd-server",
		"StatefulSet/graphcd-controller",
		"PodDisruptionBudget/graphcd-server",
		"Job/graphcd-secret-init",
		"FlowSchema/graphcd-controller-leader-election",
		"NetworkPolicy/graphcd-controller",
		"NetworkPolicy/graphcd-redis",
		"NetworkPolicy/graphcd-repo-server",
		"NetworkPolicy/graphcd-secret-init",
		"NetworkPolicy/graphcd-server",
	})
	ctx := t.Context()

	// KWOK completes the Job's Pod without running it, so the Secrets are
	// created here by the same code, with the Job's ServiceAccount: that
	// proves its Role is enough.
	initClient := impersonate(t, ns, "graphcd-secret-init")
	for _, want := range []string{"created", "unchanged"} {
		results, err := bootstrap.Ensure(ctx, initClient, ns)
		if err != nil {
			t.Fatalf("graphcd install secrets as graphcd-secret-init: %v", err)
		}
		for _, r := range results {
			if r.Outcome() != want {
				t.Errorf("secret %s %s, want %s", r.Name, r.Outcome(), want)
			}
		}
	}
	checkSecretRefs(t, ns, "ha")
	checkLeasePriority(t, ns)

	checkAccess(t, ns, []access{
		{sa: "graphcd-server", verb: "patch", group: "graphcd.io", resource: "applicationsets", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "get", resource: "pods", sub: "log", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "get", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "patch", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "list", group: "events.k8s.io", resource: "events", namespace: "default", allowed: true},
		{sa: "graphcd-server", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: false},
		{sa: "graphcd-server", verb: "list", resource: "secrets", namespace: "default", allowed: false},
		{sa: "graphcd-server", verb: "create", group: "graphcd.io", resource: "applications", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "update", group: "graphcd.io", resource: "applications", sub: "status", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "create", resource: "secrets", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "watch", resource: "configmaps", namespace: "own", allowed: true},
		{sa: "graphcd-server", verb: "update", resource: "configmaps", namespace: "own", allowed: false},
		{sa: "graphcd-server", verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "own", allowed: false},
		{sa: "graphcd-controller", verb: "create", group: "apps", resource: "deployments", namespace: "default", allowed: true},
		{sa: "graphcd-controller", verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "own", allowed: true},
		{sa: "graphcd-repo-server", verb: "get", resource: "secrets", namespace: "own", allowed: false},
		{sa: "graphcd-redis", verb: "get", resource: "secrets", namespace: "own", allowed: false},
		{sa: "graphcd-secret-init", verb: "create", resource: "secrets", namespace: "own", allowed: true},
		{sa: "graphcd-secret-init", verb: "get", resource: "secrets", name: "graphcd-redis", namespace: "own", allowed: true},
		{sa: "graphcd-secret-init", verb: "get", resource: "secrets", name: "graphcd-secret", namespace: "own", allowed: false},
		{sa: "graphcd-secret-init", verb: "list", resource: "secrets", namespace: "own", allowed: false},
		{sa: "graphcd-secret-init", verb: "update", resource: "secrets", name: "graphcd-redis", namespace: "own", allowed: false},
	})

	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		name := p.Labels["app.kubernetes.io/name"]
		// Each controller Pod's shard (GRAPHCD_SHARD) is this label.
		if name == "graphcd-controller" {
			if got, want := p.Labels["apps.kubernetes.io/pod-index"], strings.TrimPrefix(p.Name, "graphcd-controller-"); got != want {
				t.Errorf("pod %s: label apps.kubernetes.io/pod-index = %q, want %q", p.Name, got, want)
			}
		}
		// No Kubernetes API token where no Kubernetes API is called.
		if name == "graphcd-repo-server" || name == "graphcd-redis" {
			for _, v := range p.Spec.Volumes {
				if v.Projected != nil {
					t.Errorf("pod %s mounts a service account token (volume %s)", p.Name, v.Name)
				}
			}
		}
	}
	checkNetworkPolicies(t, ns, pods.Items)

	runAs(t, ns, "graphcd-server", serverReady, "server", "--listen", "127.0.0.1:0", "--controller=false")
	runAs(t, ns, "graphcd-controller", defaultProjectIn(ns), "controller", "--shards", "2", "--shard", "0", "--metrics-listen", "0")
	t.Run("end to end", func(t *testing.T) { haEndToEnd(t, ns) })
	t.Run("refusals", func(t *testing.T) { haRefusals(t, ns) })
}

// applySet builds deploy/<dir>, checks its objects (kinds and names in
// order, Pod security) and applies it, moved into a namespace of its own
// whose Pods must meet the restricted Pod Security Standard, with its
// cluster-scoped RBAC objects renamed for the namespace so that sets can
// run side by side. overlay adds to the kustomization that moves it. It
// waits until every Deployment and StatefulSet is ready and every Job
// complete, and returns the namespace.
func applySet(t *testing.T, dir string, overlay func(ns string) string, want []string) string {
	t.Helper()
	ctx := t.Context()
	objs := kustomize(t, dir)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
		checkPodSecurity(t, o)
		checkLabels(t, o)
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("deploy/%s objects (-got +want):\n%s", dir, diff)
	}

	ns := cluster.Namespace(t)
	nsObj, err := cluster.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	if _, err := cluster.Client.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	extra := ""
	if overlay != nil {
		extra = overlay(ns)
	}
	objs = buildInto(t, dir, ns, extra)
	renameClusterRBAC(t, objs, ns)
	apply(t, objs)
	waitReady(t, ns, objs)
	return ns
}

// buildInto builds an overlay of deploy/<dir> that moves it to ns, the
// way a user installing elsewhere would.
func buildInto(t *testing.T, dir, ns, extra string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := install.BuildInto(t.TempDir(), dir, ns, extra)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// checkLabels wants the recommended labels on every object.
func checkLabels(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	l := o.GetLabels()
	if l["app.kubernetes.io/part-of"] != "graphcd" || l["app.kubernetes.io/name"] == "" || l["app.kubernetes.io/component"] == "" {
		t.Errorf("%s/%s labels %v: want app.kubernetes.io/part-of=graphcd, name and component", o.GetKind(), o.GetName(), l)
	}
}

// podTemplate returns the Pod template of a workload, nil for other kinds.
func podTemplate(t *testing.T, o *unstructured.Unstructured) *corev1.PodTemplateSpec {
	t.Helper()
	var tmpl corev1.PodTemplateSpec
	switch o.GetKind() {
	case "Deployment", "StatefulSet", "Job":
		m, found, err := unstructured.NestedMap(o.Object, "spec", "template")
		if err != nil || !found {
			t.Fatalf("%s/%s: no pod template (%v)", o.GetKind(), o.GetName(), err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &tmpl); err != nil {
			t.Fatal(err)
		}
		return &tmpl
	}
	return nil
}

// checkPodSecurity wants every container to run as graphcd's non-root
// user, on a read-only root filesystem, without privilege escalation or
// capabilities, under the runtime's seccomp profile, with resource
// requests and limits; and the Pod labelled as its workload is.
func checkPodSecurity(t *testing.T, o *unstructured.Unstructured) {
	t.Helper()
	tmpl := podTemplate(t, o)
	if tmpl == nil {
		return
	}
	what := o.GetKind() + "/" + o.GetName()
	ps := tmpl.Spec.SecurityContext
	if ps == nil || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot || ps.SeccompProfile == nil || ps.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod securityContext %+v, want runAsNonRoot and seccomp RuntimeDefault", what, ps)
	}
	if got := tmpl.Labels["app.kubernetes.io/name"]; got != o.GetName() {
		t.Errorf("%s: pod label app.kubernetes.io/name = %q, want %q", what, got, o.GetName())
	}
	for _, c := range slices.Concat(tmpl.Spec.InitContainers, tmpl.Spec.Containers) {
		sc := c.SecurityContext
		ok := sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot &&
			sc.RunAsUser != nil && *sc.RunAsUser == 65532 && sc.RunAsGroup != nil && *sc.RunAsGroup == 65532 &&
			sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem &&
			sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation &&
			sc.Capabilities != nil && slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) && len(sc.Capabilities.Add) == 0 &&
			sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
		if !ok {
			t.Errorf("%s container %s: securityContext %+v, want the restricted profile as 65532:65532 with a read-only root", what, c.Name, sc)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
				t.Errorf("%s container %s: no %s request or limit (%+v)", what, c.Name, r, c.Resources)
			}
		}
	}
}

// renameClusterRBAC gives cluster-scoped RBAC objects a suffix of the
// namespace, so that sets applied side by side do not share them. CRDs
// stay shared: every set applies the same ones.
func renameClusterRBAC(t *testing.T, objs []*unstructured.Unstructured, ns string) {
	t.Helper()
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			o.SetName(o.GetName() + "-" + ns)
		case "FlowSchema":
			o.SetName(o.GetName() + "-" + ns)
			subjects, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			for _, r := range subjects {
				for _, s := range r.(map[string]any)["subjects"].([]any) {
					if got, _, _ := unstructured.NestedString(s.(map[string]any), "serviceAccount", "namespace"); got != ns {
						t.Errorf("FlowSchema %s: ServiceAccount namespace %q, want %s (kustomize's namespace)", o.GetName(), got, ns)
					}
				}
			}
		case "ClusterRoleBinding":
			o.SetName(o.GetName() + "-" + ns)
			if err := unstructured.SetNestedField(o.Object, o.Object["roleRef"].(map[string]any)["name"].(string)+"-"+ns, "roleRef", "name"); err != nil {
				t.Fatal(err)
			}
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				if got := s.(map[string]any)["namespace"]; got != ns {
					t.Errorf("ClusterRoleBinding %s: subject namespace %v, want %s (kustomize's namespace)", o.GetName(), got, ns)
				}
			}
		}
	}
	resources := map[string]string{"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings", "FlowSchema": "flowschemas"}
	for _, o := range objs {
		if res, ok := resources[o.GetKind()]; ok {
			gvr := o.GroupVersionKind().GroupVersion().WithResource(res)
			name := o.GetName()
			t.Cleanup(func() {
				_ = dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
			})
		}
	}
}

// apply server-side-applies every object, in order.
func apply(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if err := install.Apply(t.Context(), cluster.Config, fieldManager, objs); err != nil {
		t.Fatal(err)
	}
}

// waitReady waits until every Deployment and StatefulSet among objs has
// all its replicas ready and every Job has completed.
func waitReady(t *testing.T, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	apps := cluster.Client.AppsV1()
	for _, o := range objs {
		name, kind := o.GetName(), o.GetKind()
		var state string
		check := func(ctx context.Context) (bool, error) {
			switch kind {
			case "Deployment":
				d, err := apps.Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				state = fmt.Sprintf("%+v", d.Status)
				return deploymentReady(d), nil
			case "StatefulSet":
				s, err := apps.StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				state = fmt.Sprintf("%+v", s.Status)
				return s.Status.ObservedGeneration == s.Generation && s.Status.ReadyReplicas == *s.Spec.Replicas && s.Status.UpdatedReplicas == *s.Spec.Replicas, nil
			case "Job":
				j, err := cluster.Client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				state = fmt.Sprintf("%+v", j.Status)
				return jobComplete(j), nil
			}
			return true, nil
		}
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, readyTimeout, true, check); err != nil {
			t.Fatalf("%s/%s not ready: %v; status %s%s", kind, name, err, state, podProblems(ctx, ns))
		}
	}
}

func deploymentReady(d *appsv1.Deployment) bool {
	want := *d.Spec.Replicas
	return d.Status.ObservedGeneration == d.Generation && d.Status.ReadyReplicas == want &&
		d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want
}

func jobComplete(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// podProblems describes why Pods are missing: the warning events of the
// namespace (a Pod Security rejection shows there).
func podProblems(ctx context.Context, ns string) string {
	ev, err := cluster.Client.CoreV1().Events(ns).List(context.WithoutCancel(ctx), metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range ev.Items {
		fmt.Fprintf(&b, "\n  %s/%s: %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
	return b.String()
}

// impersonate returns a client acting as ServiceAccount sa of ns.
func impersonate(t *testing.T, ns, sa string) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(install.AsServiceAccount(cluster.Config, ns, sa))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkAccess asks the authorizer each question and wants its answer.
func checkAccess(t *testing.T, ns string, questions []access) {
	t.Helper()
	for _, q := range questions {
		where := q.namespace
		if where == "own" {
			where = ns
		}
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":" + q.sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: where, Verb: q.verb, Group: q.group, Resource: q.resource, Subresource: q.sub, Name: q.name,
			},
		}}
		got, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != q.allowed {
			res := q.resource
			if q.sub != "" {
				res += "/" + q.sub
			}
			if q.group != "" {
				res += "." + q.group
			}
			t.Errorf("%s may %s %s %q in namespace %q: %v, want %v", q.sa, q.verb, res, q.name, where, got.Status.Allowed, q.allowed)
		}
	}
}

// checkSecretRefs wants every Secret a Pod of deploy/<dir> mounts or reads
// a key of to exist in ns with that key.
func checkSecretRefs(t *testing.T, ns, dir string) {
	t.Helper()
	keysOf := map[string]map[string][]byte{}
	secretKeys := func(name string) map[string][]byte {
		if k, ok := keysOf[name]; ok {
			return k
		}
		s, err := cluster.Client.CoreV1().Secrets(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("secret %s: %v", name, err)
		} else {
			keysOf[name] = s.Data
		}
		return keysOf[name]
	}
	for _, o := range kustomize(t, dir) {
		tmpl := podTemplate(t, o)
		if tmpl == nil {
			continue
		}
		for _, v := range tmpl.Spec.Volumes {
			if v.Secret == nil {
				continue
			}
			data := secretKeys(v.Secret.SecretName)
			for _, item := range v.Secret.Items {
				if _, ok := data[item.Key]; !ok {
					t.Errorf("%s/%s mounts key %s of secret %s, which it does not have", o.GetKind(), o.GetName(), item.Key, v.Secret.SecretName)
				}
			}
		}
		for _, c := range tmpl.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					continue
				}
				ref := e.ValueFrom.SecretKeyRef
				if _, ok := secretKeys(ref.Name)[ref.Key]; !ok {
					t.Errorf("%s/%s env %s reads key %s of secret %s, which it does not have", o.GetKind(), o.GetName(), e.Name, ref.Key, ref.Name)
				}
			}
			for _, a := range c.Args {
				_, path, ok := strings.Cut(a, "=/etc/graphcd/")
				if !ok {
					continue
				}
				if !mountsFile(tmpl, c, "/etc/graphcd/"+path, secretKeys) {
					t.Errorf("%s/%s container %s: %s is not a file of a mounted Secret", o.GetKind(), o.GetName(), c.Name, a)
				}
			}
		}
	}
}

// mountsFile reports whether path is a key of a Secret volume c mounts.
func mountsFile(tmpl *corev1.PodTemplateSpec, c corev1.Container, path string, secretKeys func(string) map[string][]byte) bool {
	for _, m := range c.VolumeMounts {
		rel, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")
		if !ok {
			continue
		}
		for _, v := range tmpl.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			if len(v.Secret.Items) == 0 {
				_, ok := secretKeys(v.Secret.SecretName)[rel]
				return ok
			}
			for _, item := range v.Secret.Items {
				if item.Path == rel {
					return true
				}
			}
		}
	}
	return false
}

// checkNetworkPolicies wants each NetworkPolicy to select Pods, and those
// it lets in to be the roles named in its rules.
func checkNetworkPolicies(t *testing.T, ns string, pods []corev1.Pod) {
	t.Helper()
	list, err := cluster.Client.NetworkingV1().NetworkPolicies(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selected := func(sel metav1.LabelSelector) []string {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pods {
			if s.Matches(labels.Set(p.Labels)) && !slices.Contains(names, p.Labels["app.kubernetes.io/name"]) {
				names = append(names, p.Labels["app.kubernetes.io/name"])
			}
		}
		slices.Sort(names)
		return names
	}
	wantFrom := map[string][]string{
		"graphcd-repo-server": {"graphcd-controller", "graphcd-server"},
		"graphcd-redis":       {"graphcd-controller", "graphcd-repo-server", "graphcd-server"},
	}
	for _, np := range list.Items {
		if got := selected(np.Spec.PodSelector); !slices.Equal(got, []string{np.Name}) {
			t.Errorf("NetworkPolicy %s selects the Pods of %v, want those of %s", np.Name, got, np.Name)
		}
		var from []string
		for _, rule := range np.Spec.Ingress {
			for _, peer := range rule.From {
				if peer.PodSelector != nil {
					from = append(from, selected(*peer.PodSelector)...)
				}
			}
		}
		if want, ok := wantFrom[np.Name]; ok && !slices.Equal(from, want) {
			t.Errorf("NetworkPolicy %s lets in the Pods of %v, want %v", np.Name, from, want)
		}
	}
}
