package controller

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/health"
	"github.com/graphcd/graphcd/internal/appstate"
)

func TestPodInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  string
		want []appstate.Info
	}{
		{"running", pod, []appstate.Info{{Name: "Status Reason", Value: "Running"}, {Name: "Containers", Value: "1/1"}, {Name: "Restart Count", Value: "0"}}},
		{"crash loop", `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}
spec: {nodeName: n1, containers: [{name: a, image: x}, {name: b, image: y}]}
status:
  phase: Running
  containerStatuses:
  - {name: a, ready: true, restartCount: 1, state: {running: {}}}
  - {name: b, ready: false, restartCount: 4, state: {waiting: {reason: CrashLoopBackOff}}}
`, []appstate.Info{{Name: "Status Reason", Value: "CrashLoopBackOff"}, {Name: "Node", Value: "n1"}, {Name: "Containers", Value: "1/2"}, {Name: "Restart Count", Value: "5"}}},
		{"evicted", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}\nstatus: {phase: Failed, reason: Evicted}\n",
			[]appstate.Info{{Name: "Status Reason", Value: "Evicted"}, {Name: "Containers", Value: "0/1"}, {Name: "Restart Count", Value: "0"}}},
		{"terminating", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}\nspec: {containers: [{name: a}]}\nstatus: {phase: Running}\n",
			[]appstate.Info{{Name: "Status Reason", Value: "Terminating"}, {Name: "Containers", Value: "0/1"}, {Name: "Restart Count", Value: "0"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(infoOf(obj(t, tc.pod)), tc.want); d != "" {
				t.Errorf("infoOf (-got +want):\n%s", d)
			}
		})
	}
}

// stateFixture is an app of n Deployments (each with a ReplicaSet and two
// Pods), n ConfigMaps and a Secret, compared with live objects of which
// the first Deployment was scaled by hand.
func stateFixture(tb testing.TB, n int) stateInput {
	tb.Helper()
	parse := func(y string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
			tb.Fatal(err)
		}
		return u
	}
	in := stateInput{
		app:  types.NamespacedName{Namespace: "graphcd", Name: "shop"},
		live: map[ResourceKey]*unstructured.Unstructured{}, children: map[ResourceKey]*unstructured.Unstructured{},
		versions: func(schema.GroupKind) string { return "v1" }, now: time.Unix(0, 0),
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	addNode := func(u *unstructured.Unstructured, parent string) {
		nd := cache.Node{ResourceKey: KeyOf(u), UID: string(u.GetUID()), CreationTimestamp: created}
		if parent != "" {
			nd.ParentUIDs = []string{parent}
		}
		in.tree = append(in.tree, nd)
	}
	for i := range n {
		deploy := fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: web-%[1]d, namespace: shop, uid: d%[1]d, resourceVersion: "1"}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: web-%[1]d}}
  template:
    metadata: {labels: {app: web-%[1]d}}
    spec: {containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80}]}]}
status: {replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2, observedGeneration: 1}
`, i, 2)
		d := parse(deploy)
		in.desired = append(in.desired, parse(deploy))
		if i == 0 {
			d = parse(strings.Replace(deploy, "replicas: 2\n  selector", "replicas: 3\n  selector", 1))
		}
		in.live[KeyOf(d)] = d
		addNode(d, "")
		rs := parse(fmt.Sprintf("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web-%[1]d-abc, namespace: shop, uid: r%[1]d, annotations: {deployment.kubernetes.io/revision: '1'}}\nspec: {replicas: 2, template: {spec: {containers: [{name: web, image: 'nginx:1.27'}]}}}\nstatus: {replicas: 2, readyReplicas: 2, availableReplicas: 2}\n", i))
		in.children[KeyOf(rs)] = rs
		addNode(rs, "d"+fmt.Sprint(i))
		for j := range 2 {
			p := parse(strings.Replace(strings.Replace(pod, "name: p,", fmt.Sprintf("name: web-%d-abc-%d, uid: p%d-%d,", i, j, i, j), 1), "namespace: ns", "namespace: shop", 1))
			in.children[KeyOf(p)] = p
			addNode(p, "r"+fmt.Sprint(i))
		}
		cm := parse(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%[1]d, namespace: shop, uid: c%[1]d}\ndata: {mode: prod, index: '%[1]d'}\n", i))
		in.desired = append(in.desired, cm)
		in.live[KeyOf(cm)] = cm
		addNode(cm, "")
	}
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: shop, uid: s1}\ndata: {password: %s}\n"
	in.desired = append(in.desired, parse(fmt.Sprintf(secret, "Z2l0LXZhbHVl"))) // git-value
	live := parse(fmt.Sprintf(secret, "bGl2ZS12YWx1ZQ=="))                      // live-value
	in.live[KeyOf(live)] = live
	addNode(live, "")
	hook := parse("apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, uid: h1, annotations: {argocd.argoproj.io/hook: PreSync}}\nspec: {template: {spec: {containers: [{name: m, image: 'migrate:1'}]}}}\n")
	in.live[KeyOf(hook)] = hook
	addNode(hook, "")

	differ, err := diff.New(diff.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if in.health, err = health.New(health.Options{}); err != nil {
		tb.Fatal(err)
	}
	compared := map[ResourceKey]*unstructured.Unstructured{}
	for k, v := range in.live {
		if !isHook(v) {
			compared[k] = v
		}
	}
	if in.cmp, err = compare(tb.Context(), compareInput{desired: in.desired, live: compared, differ: differ, health: in.health}); err != nil {
		tb.Fatal(err)
	}
	return in
}

func TestBuildState(t *testing.T) {
	in := stateFixture(t, 2)
	st := buildState(t.Context(), in)
	var tree []string
	for _, n := range st.Tree {
		var parents []string
		for _, p := range n.ParentRefs {
			parents = append(parents, p.Kind+"/"+p.Name)
		}
		h := ""
		if n.Health != nil {
			h = string(n.Health.Status)
		}
		tree = append(tree, fmt.Sprintf("%s/%s sync=%s health=%s parents=%v images=%v", n.Kind, n.Name, n.Sync, h, parents, n.Images))
	}
	want := []string{
		"Deployment/web-0 sync=OutOfSync health=Progressing parents=[] images=[nginx:1.27]",
		"ReplicaSet/web-0-abc sync= health=Healthy parents=[Deployment/web-0] images=[nginx:1.27]",
		"Pod/web-0-abc-0 sync= health=Healthy parents=[ReplicaSet/web-0-abc] images=[nginx:1.27]",
		"Pod/web-0-abc-1 sync= health=Healthy parents=[ReplicaSet/web-0-abc] images=[nginx:1.27]",
		"ConfigMap/cm-0 sync=Synced health= parents=[] images=[]",
	}
	if d := cmp.Diff(tree[:5], want); d != "" {
		t.Errorf("first nodes (-got +want):\n%s", d)
	}
	byName := map[string]appstate.ManagedResource{}
	for _, m := range st.Managed {
		byName[m.Kind+"/"+m.Name] = m
	}
	if m := byName["Deployment/web-0"]; m.Status != "OutOfSync" || !strings.Contains(m.Diff, "-  replicas: 3") || !strings.Contains(m.Live, "replicas: 3") || !strings.Contains(m.Desired, "replicas: 2") {
		t.Errorf("scaled Deployment = %+v", m)
	}
	if m := byName["Deployment/web-1"]; m.Status != "Synced" || m.Diff != "" || m.Live == "" || m.Desired == "" {
		t.Errorf("steady Deployment = %+v", m)
	}
	if m := byName["Job/migrate"]; !m.Hook || m.Live == "" || m.Desired != "" || m.Status != "" {
		t.Errorf("hook = %+v", m)
	}
	s := byName["Secret/creds"]
	if s.Status != "OutOfSync" || !strings.Contains(s.Desired, `password: "++++++++"`) || !strings.Contains(s.Live, `password: "+++++++++"`) || !strings.Contains(s.Diff, "password") {
		t.Errorf("secret = %+v", s)
	}
	for _, m := range st.Managed {
		for _, v := range []string{"Z2l0LXZhbHVl", "bGl2ZS12YWx1ZQ==", "git-value", "live-value"} {
			if strings.Contains(m.Live+m.Desired+m.Diff, v) {
				t.Errorf("%s/%s holds %q", m.Kind, m.Name, v)
			}
		}
	}
}

// Resources Git declares that the cluster lacks follow the live tree as
// missing nodes, sorted, with the comparison's sync status and health;
// live ones, and live ones Git no longer declares, are never missing.
func TestBuildStateShowsMissingResources(t *testing.T) {
	in := stateFixture(t, 1)
	for _, y := range []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec: {ports: [{port: 80}]}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: later, namespace: shop}\ndata: {mode: prod}\n",
	} {
		in.desired = append(in.desired, obj(t, y))
	}
	in.desired = slices.DeleteFunc(in.desired, func(u *unstructured.Unstructured) bool { return u.GetName() == "cm-0" }) // live, to prune
	differ, err := diff.New(diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compared := map[ResourceKey]*unstructured.Unstructured{}
	for k, v := range in.live {
		if !isHook(v) {
			compared[k] = v
		}
	}
	if in.cmp, err = compare(t.Context(), compareInput{desired: in.desired, live: compared, differ: differ, health: in.health}); err != nil {
		t.Fatal(err)
	}
	st := buildState(t.Context(), in)
	if len(st.Tree) != len(in.tree)+2 {
		t.Fatalf("%d nodes, want the %d live ones and 2 missing", len(st.Tree), len(in.tree))
	}
	for _, n := range st.Tree[:len(in.tree)] {
		if n.Missing || n.CreatedAt == nil {
			t.Errorf("live node %s/%s = %+v", n.Kind, n.Name, n)
		}
	}
	var got []string
	for _, n := range st.Tree[len(in.tree):] {
		got = append(got, fmt.Sprintf("%s/%s/%s version=%s missing=%t sync=%s health=%s uid=%q created=%v parents=%d",
			n.Kind, n.Namespace, n.Name, n.Version, n.Missing, n.Sync, n.Health.Status, n.UID, n.CreatedAt, len(n.ParentRefs)))
	}
	want := []string{
		"ConfigMap/shop/later version=v1 missing=true sync=OutOfSync health=Missing uid=\"\" created=<nil> parents=0",
		"Service/shop/web version=v1 missing=true sync=OutOfSync health=Missing uid=\"\" created=<nil> parents=0",
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("missing nodes (-got +want):\n%s", d)
	}
}

// BenchmarkCompare is the comparison of a 40-resource app (20
// Deployments with 60 descendants, 20 ConfigMaps), the reconcile step
// the state writer follows; BenchmarkAppState is what the writer adds
// per reconcile when the state did not change (build, hash, skip).
func BenchmarkCompare(b *testing.B) {
	in := stateFixture(b, 20)
	differ, _ := diff.New(diff.Options{})
	compared := map[ResourceKey]*unstructured.Unstructured{}
	for k, v := range in.live {
		if !isHook(v) {
			compared[k] = v
		}
	}
	for b.Loop() {
		if _, err := compare(b.Context(), compareInput{desired: in.desired, live: compared, differ: differ, health: in.health}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppState(b *testing.B) {
	in := stateFixture(b, 20)
	w := appstate.NewWriter(appstate.NewMemory(), appstate.WriterOptions{})
	for b.Loop() {
		if _, err := w.Write(b.Context(), buildState(b.Context(), in)); err != nil {
			b.Fatal(err)
		}
	}
}
