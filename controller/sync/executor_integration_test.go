//go:build integration

package sync_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/sync"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var (
	cluster *localcluster.Cluster
	dyn     dynamic.Interface
	mapper  meta.RESTMapper
)

// TestMain starts a full cluster: KWOK runs the pods of Deployments and
// completes the pods of Jobs, so hooks finish and waves turn healthy.
func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster, func(c *localcluster.Cluster) (func(), error) {
		var err error
		if dyn, err = dynamic.NewForConfig(c.Config); err != nil {
			return nil, err
		}
		dc, err := discovery.NewDiscoveryClientForConfig(c.Config)
		if err != nil {
			return nil, err
		}
		mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
		return func() {}, nil
	}))
}

// appLabel marks the objects of one test's app, so the harness can list
// its live objects for the planner as the controller would.
const appLabel = "graphcd.io/test-app"

// liveTypes are the types the harness lists as the app's live objects.
var liveTypes = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
}

// harness drives one sync step by step, rebuilding the plan from the
// desired objects and the live cluster before every step, as the
// reconciler does.
type harness struct {
	t       *testing.T
	ns      string
	exec    *sync.Executor
	desired []*unstructured.Unstructured
	opts    sync.Options
	run     sync.Run
	state   *v1alpha1.OperationState
	// ops counts the operations started, for a Run.ID of each.
	ops int
}

func newHarness(t *testing.T, fixture string) *harness {
	t.Helper()
	h := &harness{t: t, ns: cluster.Namespace(t)}
	h.exec = newExecutor(t)
	h.opts = sync.Options{Namespace: h.ns}
	h.run = sync.Run{ID: h.ns}
	h.setDesired(fixture)
	return h
}

func newExecutor(t *testing.T) *sync.Executor {
	t.Helper()
	e, err := sync.New(sync.Config{Client: dyn, Mapper: mapper, WaveDelay: 20 * time.Millisecond, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// setDesired loads testdata/exec/fixture as the desired objects and
// starts a new operation.
func (h *harness) setDesired(fixture string) {
	h.t.Helper()
	h.setObjects(load(h.t, "exec/"+fixture))
}

// setYAML sets the desired objects from a YAML stream and starts a new
// operation.
func (h *harness) setYAML(stream string) {
	h.t.Helper()
	h.setObjects(parse(h.t, stream))
}

func (h *harness) setObjects(objs []*unstructured.Unstructured) {
	h.desired = objs
	for _, obj := range h.desired {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[appLabel] = h.ns
		obj.SetLabels(labels)
	}
	h.state = nil
}

// live lists the app's live objects.
func (h *harness) live() []*unstructured.Unstructured {
	h.t.Helper()
	var out []*unstructured.Unstructured
	for _, gvr := range liveTypes {
		list, err := dyn.Resource(gvr).Namespace(h.ns).List(h.t.Context(), metav1.ListOptions{LabelSelector: appLabel + "=" + h.ns})
		if err != nil {
			h.t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
	}
	return out
}

// step plans and runs one step. Errors are API hiccups worth a retry;
// they are logged.
func (h *harness) step() sync.Result {
	h.t.Helper()
	plan, err := sync.Build(h.desired, h.live(), h.opts)
	if err != nil {
		h.t.Fatalf("Build: %v", err)
	}
	if h.state == nil {
		// A new operation: a new identity, as the controller gives each.
		h.ops++
		h.run.ID = fmt.Sprintf("%s.%d", h.ns, h.ops)
	}
	run := h.run
	run.Plan = plan
	st, res, err := h.exec.Step(h.t.Context(), run, h.state)
	if st == nil {
		h.t.Fatal("Step returned no state")
	}
	if err != nil {
		h.t.Logf("step: %v", err)
	}
	h.state = st
	return res
}

// runUntil steps until the operation is done or cond holds; it fails
// after maxSteps steps, which counts steps, not time.
func (h *harness) runUntil(cond func(*v1alpha1.OperationState) bool) {
	h.t.Helper()
	const maxSteps = 3000
	for range maxSteps {
		res := h.step()
		if res.Done || (cond != nil && cond(h.state)) {
			return
		}
		time.Sleep(min(res.RequeueAfter, 50*time.Millisecond))
	}
	h.t.Fatalf("the sync did not finish in %d steps:\n%s", maxSteps, dump(h.state))
}

// sync runs the operation to its end and checks its phase.
func (h *harness) sync(want v1alpha1.OperationPhase) {
	h.t.Helper()
	h.runUntil(nil)
	if h.state.Phase != want || h.state.FinishedAt == nil {
		h.t.Fatalf("phase %s, want %s (finished at %v):\n%s", h.state.Phase, want, h.state.FinishedAt, dump(h.state))
	}
}

func dump(st *v1alpha1.OperationState) string {
	b, _ := yaml.Marshal(st)
	return string(b)
}

// order renders the recorded results as "SyncPhase wave Kind name status
// hookPhase", generated name suffixes replaced by "*".
func order(st *v1alpha1.OperationState, generated ...string) []string {
	var out []string
	for _, r := range st.SyncResult.Resources {
		name := r.Name
		for _, g := range generated {
			if strings.HasPrefix(name, g) {
				name = g + "*"
			}
		}
		l := fmt.Sprintf("%s %d %s %s %s %s", r.SyncPhase, r.SyncWave, r.Kind, name, r.Status, r.HookPhase)
		if r.HookType != "" {
			l += " hook"
		}
		out = append(out, l)
	}
	return out
}

func checkOrder(t *testing.T, got, want []string) {
	t.Helper()
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("recorded results (-got +want):\n%s", d)
	}
}

// result finds the recorded result of kind/name.
func result(t *testing.T, st *v1alpha1.OperationState, kind, name string) v1alpha1.ResourceResult {
	t.Helper()
	for _, r := range st.SyncResult.Resources {
		if r.Kind == kind && r.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s %s:\n%s", kind, name, dump(st))
	return v1alpha1.ResourceResult{}
}

var gvrs = map[string]schema.GroupVersionResource{
	"ConfigMap":  {Version: "v1", Resource: "configmaps"},
	"Service":    {Version: "v1", Resource: "services"},
	"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
	"Job":        {Group: "batch", Version: "v1", Resource: "jobs"},
	"ReplicaSet": {Group: "apps", Version: "v1", Resource: "replicasets"},
}

// get reads a live object; nil when it does not exist.
func (h *harness) get(kind, name string) *unstructured.Unstructured {
	h.t.Helper()
	obj, err := dyn.Resource(gvrs[kind]).Namespace(h.ns).Get(h.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return obj
}

// names lists the names of the live objects of kind.
func (h *harness) names(kind string) []string {
	h.t.Helper()
	list, err := dyn.Resource(gvrs[kind]).Namespace(h.ns).List(h.t.Context(), metav1.ListOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, o := range list.Items {
		if o.GetDeletionTimestamp() == nil {
			out = append(out, o.GetName())
		}
	}
	return out
}

// roundTrip stores and reads back a state as the Application's status
// would hold it.
func roundTrip(t *testing.T, st *v1alpha1.OperationState) *v1alpha1.OperationState {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out v1alpha1.OperationState
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
