//go:build integration

package resolvers_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
	"github.com/graphcd/graphcd/resolvers"
)

// setModeAction is a custom action with a parameter, in Argo CD's form:
// it sets data.mode of a ConfigMap.
const setModeAction = `discovery.lua: |
  local actions = {}
  actions["set-mode"] = {params = {{name = "mode", default = "prod"}}}
  return actions
definitions:
- name: set-mode
  action.lua: |
    if obj.data == nil then obj.data = {} end
    obj.data.mode = actionParams["mode"]
    return obj
`

// actionObjects creates a Deployment, a CronJob and a ConfigMap in ns and
// makes them the managed resources of the apps named.
func actionObjects(t *testing.T, ns string, apps ...string) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	pod := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "example.com/web:1"}}, RestartPolicy: corev1.RestartPolicyNever}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: func() corev1.PodSpec {
			p := *pod.DeepCopy()
			p.RestartPolicy = corev1.RestartPolicyAlways
			return p
		}()},
	}}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(t.Context(), dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cron := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "report"}, Spec: batchv1.CronJobSpec{
		Schedule:    "*/5 * * * *",
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: pod}}},
	}}
	if _, err := cluster.Client.BatchV1().CronJobs(ns).Create(t.Context(), cron, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "dev"}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	managed := []appstate.ManagedResource{
		{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: ns, Name: "web", Status: v1alpha1.SyncStatusCodeSynced},
		{Group: "batch", Version: "v1", Kind: "CronJob", Namespace: ns, Name: "report", Status: v1alpha1.SyncStatusCodeSynced},
		{Version: "v1", Kind: "ConfigMap", Namespace: ns, Name: "settings", Status: v1alpha1.SyncStatusCodeSynced},
	}
	for _, app := range apps {
		st := appstate.State{App: types.NamespacedName{Namespace: ns, Name: app}, ReconciledAt: time.Now(), Managed: managed}
		if err := states.Put(t.Context(), st); err != nil {
			t.Fatal(err)
		}
	}
}

// actionProject creates an AppProject in ns open to ns, less the kinds
// denied.
func actionProject(t *testing.T, ns, name string, denied ...metav1.GroupKind) {
	t.Helper()
	p := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.AppProjectSpec{
		SourceRepos:                []string{"*"},
		Destinations:               []v1alpha1.ApplicationDestination{{Server: "*", Namespace: ns}},
		NamespaceResourceBlacklist: denied,
	}}
	if err := kube.Create(t.Context(), p); err != nil {
		t.Fatal(err)
	}
}

const runAction = `mutation($in: ApplicationResourceInput!, $a: String!, $p: [ResourceActionParamInput!]!) {
  runResourceAction(input: $in, action: $a, params: $p) { operation group kind namespace name }
}`

type actionChange struct{ Operation, Group, Kind, Namespace, Name string }

// actionInput names a live object of app in ns for runResourceAction.
func actionInput(app, ns, group, kind, name string) map[string]any {
	return map[string]any{"application": map[string]any{"name": app, "namespace": ns}, "group": group, "kind": kind, "namespace": ns, "name": name}
}

// Resource actions through the API: each object lists its actions (the
// built-in ones and graphcd-cm's), the built-in ones change the live
// objects as documented, a custom Lua action takes its parameter, bad
// runs are refused without a write, a Job the project denies is not
// created, and every run leaves a ResourceActionRan Event on the app.
func TestRunResourceAction(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	mergeSettings(t, map[string]string{"resource.customizations.actions.ConfigMap": setModeAction})
	actionProject(t, ns, "ops")
	actionProject(t, ns, "nojobs", metav1.GroupKind{Group: "batch", Kind: "Job"})
	actionObjects(t, ns, "ops", "nojobs")
	createApps(t, ns, appSpec{name: "ops", project: "ops"}, appSpec{name: "nojobs", project: "nojobs"})
	waitCount(t, ns, 2)

	const list = `query($ns: String!, $g: String!, $k: String!, $n: String!) {
  application(name: "ops", namespace: $ns) { liveResource(group: $g, kind: $k, namespace: $ns, name: $n) {
    actions { name disabled displayName params { name type default } } } } }`
	type action struct {
		Name, DisplayName string
		Disabled          bool
		Params            []struct{ Name, Type, Default string }
	}
	actionsOf := func(group, kind, name string) map[string]action {
		var got struct {
			Application struct{ LiveResource struct{ Actions []action } }
		}
		data(t, list, map[string]any{"ns": ns, "g": group, "k": kind, "n": name}, &got)
		out := map[string]action{}
		for _, a := range got.Application.LiveResource.Actions {
			out[a.Name] = a
		}
		return out
	}
	run := func(app, group, kind, name, act string, params map[string]string) []actionChange {
		t.Helper()
		p := []map[string]string{}
		for k, v := range params {
			p = append(p, map[string]string{"name": k, "value": v})
		}
		var got struct{ RunResourceAction []actionChange }
		data(t, runAction, map[string]any{"in": actionInput(app, ns, group, kind, name), "a": act, "p": p}, &got)
		return got.RunResourceAction
	}

	dep := actionsOf("apps", "Deployment", "web")
	if a := dep["restart"]; a.Name == "" || a.Disabled {
		t.Errorf("Deployment actions %+v: want restart enabled", dep)
	}
	if a := dep["scale"]; len(a.Params) != 1 || a.Params[0].Name != "replicas" || a.Params[0].Type != "integer" || a.Params[0].Default != "1" {
		t.Errorf("scale %+v: want the integer parameter replicas defaulting to 1", a)
	}
	if !dep["resume"].Disabled {
		t.Errorf("resume on a Deployment that is not paused: %+v, want disabled", dep["resume"])
	}

	t.Run("restart", func(t *testing.T) {
		got := run("ops", "apps", "Deployment", "web", "restart", nil)
		if want := []actionChange{{"PATCH", "apps", "Deployment", ns, "web"}}; !slices.Equal(got, want) {
			t.Errorf("changes %+v, want %+v", got, want)
		}
		d, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] == "" {
			t.Errorf("the pod template has no restartedAt annotation: %v %v", d.Spec.Template.Annotations, err)
		}
	})
	t.Run("scale", func(t *testing.T) {
		run("ops", "apps", "Deployment", "web", "scale", map[string]string{"replicas": "3"})
		d, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
		if err != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
			t.Errorf("replicas %v, want 3 (%v)", d.Spec.Replicas, err)
		}
	})
	t.Run("suspend and create a job", func(t *testing.T) {
		run("ops", "batch", "CronJob", "report", "suspend", nil)
		c, err := cluster.Client.BatchV1().CronJobs(ns).Get(t.Context(), "report", metav1.GetOptions{})
		if err != nil || c.Spec.Suspend == nil || !*c.Spec.Suspend {
			t.Fatalf("the CronJob is not suspended: %v %v", c.Spec.Suspend, err)
		}
		if cron := actionsOf("batch", "CronJob", "report"); !cron["suspend"].Disabled || cron["resume"].Disabled {
			t.Errorf("after suspend: %+v, want suspend disabled and resume enabled", cron)
		}
		got := run("ops", "batch", "CronJob", "report", "create-job", nil)
		if len(got) != 1 || got[0].Operation != "CREATE" || got[0].Kind != "Job" || !strings.HasPrefix(got[0].Name, "report-") {
			t.Fatalf("changes %+v, want one Job created", got)
		}
		job, err := cluster.Client.BatchV1().Jobs(ns).Get(t.Context(), got[0].Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if refs := job.OwnerReferences; len(refs) != 1 || refs[0].Kind != "CronJob" || refs[0].UID != c.UID {
			t.Errorf("job owners %+v, want the CronJob", refs)
		}
	})
	t.Run("custom action with a parameter", func(t *testing.T) {
		eventually(t, "the custom action", func() error {
			if _, ok := actionsOf("", "ConfigMap", "settings")["set-mode"]; !ok {
				return errNotYet // the settings reader catches up
			}
			return nil
		})
		run("ops", "", "ConfigMap", "settings", "set-mode", map[string]string{"mode": "staging"})
		cm, err := cluster.Client.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
		if err != nil || cm.Data["mode"] != "staging" {
			t.Errorf("mode %q, want staging (%v)", cm.Data["mode"], err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		jobsBefore, err := cluster.Client.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name, app, group, kind, obj, action string
			params                              []map[string]string
			want                                string
		}{
			{"unknown action", "ops", "apps", "Deployment", "web", "explode", nil, "BAD_USER_INPUT"},
			{"disabled action", "ops", "apps", "Deployment", "web", "resume", nil, "BAD_USER_INPUT"},
			{"undeclared parameter", "ops", "apps", "Deployment", "web", "restart", []map[string]string{{"name": "force", "value": "true"}}, "BAD_USER_INPUT"},
			{"parameter of the wrong type", "ops", "apps", "Deployment", "web", "scale", []map[string]string{{"name": "replicas", "value": "many"}}, "BAD_USER_INPUT"},
			{"parameter given twice", "ops", "apps", "Deployment", "web", "scale", []map[string]string{{"name": "replicas", "value": "2"}, {"name": "replicas", "value": "4"}}, "BAD_USER_INPUT"},
			{"object outside the app", "ops", "apps", "Deployment", "elsewhere", "restart", nil, "NOT_FOUND"},
			{"a Job the project denies", "nojobs", "batch", "CronJob", "report", "create-job", nil, "FORBIDDEN"},
		} {
			params := tt.params
			if params == nil {
				params = []map[string]string{}
			}
			vars := map[string]any{"in": actionInput(tt.app, ns, tt.group, tt.kind, tt.obj), "a": tt.action, "p": params}
			if code := errorCode(t, runAction, vars); code != tt.want {
				t.Errorf("%s: code %q, want %q", tt.name, code, tt.want)
			}
		}
		if d, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{}); err != nil || *d.Spec.Replicas != 3 {
			t.Errorf("a refused scale changed the replicas: %v %v", d.Spec.Replicas, err)
		}
		jobs, err := cluster.Client.BatchV1().Jobs(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil || len(jobs.Items) != len(jobsBefore.Items) {
			t.Errorf("jobs %d, want %d: the refused create-job wrote one (%v)", len(jobs.Items), len(jobsBefore.Items), err)
		}
	})
	t.Run("events", func(t *testing.T) {
		notes := actionEvents(t, ns, "ops")
		for _, want := range []string{"anonymous ran action restart on resource apps/Deployment/" + ns + "/web", "ran action create-job on resource batch/CronJob/"} {
			if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, want) }) {
				t.Errorf("events %q: none says %q", notes, want)
			}
		}
		if len(actionEvents(t, ns, "nojobs")) != 0 {
			t.Error("a refused run left an event")
		}
	})
}

// actionEvents returns the notes of the ResourceActionRan Events of app.
func actionEvents(t *testing.T, ns, app string) []string {
	t.Helper()
	list, err := cluster.Client.EventsV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "regarding.kind=Application,regarding.name=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, e := range list.Items {
		if e.Reason == resolvers.ReasonResourceActionRan {
			notes = append(notes, e.Note)
		}
	}
	return notes
}

// A resource action needs its own RBAC right, action/<group>/<kind>/<name>,
// as in Argo CD: get alone lists actions but runs none, and a right to
// restart does not scale. The Event names who ran it.
func TestResourceActionRBAC(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	project := "act-" + ns
	setPolicy(t, ns, fmt.Sprintf(`
p, role:viewer, applications, get, %[1]s/*, allow
p, role:restarter, applications, action/apps/Deployment/restart, %[1]s/*, allow
g, alice, role:viewer
g, alice, role:restarter
g, bob, role:viewer
`, project))
	actionProject(t, ns, project)
	actionObjects(t, ns, "web")
	api := authAPI(t, ns, tokenTable{"alice-token": {Subject: "alice"}, "bob-token": {Subject: "bob"}}, nil)
	createApps(t, ns, appSpec{name: "web", project: project})
	waitCount(t, ns, 1)
	in := actionInput("web", ns, "apps", "Deployment", "web")
	ask := func(token, act string, params []map[string]string) string {
		t.Helper()
		if params == nil {
			params = []map[string]string{}
		}
		raw, errs := ask(t, api, token, runAction, map[string]any{"in": in, "a": act, "p": params})
		if len(errs) == 0 {
			var got struct{ RunResourceAction []actionChange }
			if err := json.Unmarshal(raw, &got); err != nil || len(got.RunResourceAction) != 1 {
				t.Errorf("%s: answer %s (%v)", act, raw, err)
			}
		}
		return codeOf(errs)
	}
	if code := ask("bob-token", "restart", nil); code != "FORBIDDEN" {
		t.Errorf("bob restarts: code %q, want FORBIDDEN", code)
	}
	if code := ask("alice-token", "scale", []map[string]string{{"name": "replicas", "value": "5"}}); code != "FORBIDDEN" {
		t.Errorf("alice scales: code %q, want FORBIDDEN", code)
	}
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil || d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] != "" || (d.Spec.Replicas != nil && *d.Spec.Replicas == 5) {
		t.Fatalf("a refused action changed the Deployment: %v %v (%v)", d.Spec.Template.Annotations, d.Spec.Replicas, err)
	}
	if code := ask("alice-token", "restart", nil); code != "" {
		t.Fatalf("alice restarts: code %q, want none", code)
	}
	notes := actionEvents(t, ns, "web")
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "alice ran action restart") {
		t.Errorf("events %q, want one of alice's restart", notes)
	}
}
