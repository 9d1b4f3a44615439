//go:build integration

package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/testenv/gitea"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// forge is the package's Gitea, which the controller may ask.
var forge *gitea.Server

// startForge runs the package's Gitea.
func startForge(*localcluster.Cluster) (func(), error) {
	var err error
	if forge, err = gitea.Start(context.Background()); err != nil {
		return nil, err
	}
	return func() {
		if err := forge.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "gitea: %v\n", err)
		}
	}, nil
}

// forgeOrg creates the organisation org on the forge and a Secret org in
// the controller's namespace holding the forge's API token.
func forgeOrg(t *testing.T, org string) {
	t.Helper()
	if err := forge.CreateOrg(t.Context(), org); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: org}, StringData: map[string]string{"token": forge.Token}}
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(appNamespace).Delete(context.Background(), org, metav1.DeleteOptions{})
	})
}

// refreshSet asks the controller to generate set again.
func refreshSet(t *testing.T, set string) {
	t.Helper()
	update(t, &v1alpha1.ApplicationSet{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: set}}, func(s *v1alpha1.ApplicationSet) {
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, appset.RefreshAnnotation, "true")
	})
}

// A pull request generator on a real Gitea: a pull request opened
// creates a preview app of its head commit, which syncs; closing it
// deletes the app.
func TestApplicationSetPullRequestsOnGitea(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("aspr")
	forgeOrg(t, p)
	repoURL, err := forge.CreateRepo(ctx, p, "web")
	if err != nil {
		t.Fatal(err)
	}
	head, err := forge.CommitFile(ctx, p, "web", "feature-x", "main", "preview/cm.yaml",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: preview}\ndata: {from: feature-x}\n")
	if err != nil {
		t.Fatal(err)
	}
	number, err := forge.OpenPullRequest(ctx, p, "web", "feature-x", "main", "Preview me")
	if err != nil {
		t.Fatal(err)
	}
	dest := cluster.Namespace(t)
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  goTemplate: true
  goTemplateOptions: [missingkey=error]
  generators:
  - pullRequest:
      gitea: {owner: %[1]s, repo: web, api: %[2]s, tokenRef: {secretName: %[1]s, key: token}}
      requeueAfterSeconds: 0
  template:
    metadata:
      name: '%[1]s-pr-{{ .number }}'
      annotations: {title: '{{ .title }}', branch: '{{ .branch_slug }}'}
    spec:
      project: default
      source: {repoURL: %[3]s, targetRevision: '{{ .head_sha }}', path: preview}
      destination: {server: https://kubernetes.default.svc, namespace: %[4]s}
      syncPolicy: {automated: {prune: true}}
`, p, forge.URL, repoURL, dest))
	name := fmt.Sprintf("%s-pr-%d", p, number)
	owned := waitOwned(t, p, name)
	if a := owned[name]; a.Spec.Source.TargetRevision != head || a.Annotations["title"] != "Preview me" || a.Annotations["branch"] != "feature-x" {
		t.Errorf("generated source %+v, annotations %v; want the head %s", a.Spec.Source, a.Annotations, head)
	}
	waitStatus(t, name, "the preview synced and healthy", func(s *v1alpha1.ApplicationStatus) bool {
		return s.Sync.Status == v1alpha1.SyncStatusCodeSynced && s.Health.Status == "Healthy" && s.Sync.Revision == head
	})
	cm, err := cluster.Client.CoreV1().ConfigMaps(dest).Get(ctx, "preview", metav1.GetOptions{})
	if err != nil || cm.Data["from"] != "feature-x" {
		t.Fatalf("the preview's ConfigMap: %+v, %v", cm, err)
	}
	// The set's resources follow the app's sync and health (written at
	// most every 10 s when nothing else changed).
	set := waitSetStatus(t, p, "the pull request's parameters and the app's health recorded", func(s *v1alpha1.ApplicationSetStatus) bool {
		e := generatedEntry(s, name)
		healthy := slices.ContainsFunc(s.Resources, func(r v1alpha1.ApplicationSetResourceStatus) bool {
			return r.Name == name && r.Status == v1alpha1.SyncStatusCodeSynced && r.Health != nil && r.Health.Status == "Healthy"
		})
		return e != nil && strings.Contains(e.Params, `"head_sha":"`+head+`"`) && healthy
	})
	t.Logf("status entry: %+v", generatedEntry(&set.Status, name))

	if err := forge.ClosePullRequest(ctx, p, "web", number); err != nil {
		t.Fatal(err)
	}
	refreshSet(t, p)
	waitOwned(t, p)
}

// An SCM provider generator on a real Gitea: one app per repository of
// the organisation that holds the path a filter asks for, a new one after
// a refresh.
func TestApplicationSetSCMProviderOnGitea(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("asscm")
	forgeOrg(t, p)
	for _, repo := range []string{"api", "docs"} {
		if _, err := forge.CreateRepo(ctx, p, repo); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := forge.CommitFile(ctx, p, "api", "main", "", "deploy/cm.yaml", "kind: ConfigMap\n"); err != nil {
		t.Fatal(err)
	}
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - scmProvider:
      gitea: {owner: %[1]s, api: %[2]s, tokenRef: {secretName: %[1]s, key: token}}
      cloneProtocol: https
      filters: [{pathsExist: [deploy]}]
      requeueAfterSeconds: 0
  template:
    metadata: {name: '{{organization}}-{{repository}}', annotations: {sha: '{{sha}}'}}
    spec:
      project: default
      source: {repoURL: '{{url}}', targetRevision: '{{branch}}', path: deploy}
      destination: {server: https://kubernetes.default.svc, namespace: guestbook}
`, p, forge.URL))
	owned := waitOwned(t, p, p+"-api")
	if a := owned[p+"-api"]; a.Spec.Source.RepoURL != forge.URL+"/"+p+"/api.git" || a.Spec.Source.TargetRevision != "main" || len(a.Annotations["sha"]) != 40 {
		t.Errorf("generated source %+v, annotations %v", a.Spec.Source, a.Annotations)
	}
	if _, err := forge.CommitFile(ctx, p, "docs", "main", "", "deploy/cm.yaml", "kind: ConfigMap\n"); err != nil {
		t.Fatal(err)
	}
	refreshSet(t, p)
	waitOwned(t, p, p+"-api", p+"-docs")
}

// A plugin generator asks the plugin its ConfigMap names, with the token
// from a Secret, and generates one app per parameter set it answers; a
// refresh asks again.
func TestApplicationSetPlugin(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	p := uniqueName("asp")
	token := "tok-" + p
	var mu sync.Mutex
	answer := []string{"one"}
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/getparams.execute" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		var req struct {
			ApplicationSetName string `json:"applicationSetName"`
			Input              struct {
				Parameters map[string]string `json:"parameters"`
			} `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.ApplicationSetName != p {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var params []map[string]string
		for _, name := range answer {
			params = append(params, map[string]string{"name": req.Input.Parameters["prefix"] + name})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"output": map[string]any{"parameters": params}})
	}))
	t.Cleanup(plugin.Close)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: p}, StringData: map[string]string{"token": token}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: appNamespace, Name: p},
		Data: map[string]string{"baseUrl": plugin.URL, "token": "$" + p + ":token", "requestTimeout": "10"}}
	if _, err := cluster.Client.CoreV1().Secrets(appNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Client.CoreV1().ConfigMaps(appNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Client.CoreV1().Secrets(appNamespace).Delete(context.Background(), p, metav1.DeleteOptions{})
		_ = cluster.Client.CoreV1().ConfigMaps(appNamespace).Delete(context.Background(), p, metav1.DeleteOptions{})
	})
	createAppSet(t, fmt.Sprintf(`
metadata: {name: %[1]s}
spec:
  generators:
  - plugin:
      configMapRef: {name: %[1]s}
      input: {parameters: {prefix: %[1]s-}}
      values: {asked: '{{generator.input.parameters.prefix}}'}
  template:
    metadata: {name: '{{name}}', annotations: {asked: '{{values.asked}}'}}
    spec:
      project: default
      source: {repoURL: https://git.example.com/apps.git, path: guestbook}
      destination: {server: https://kubernetes.default.svc, namespace: guestbook}
`, p))
	owned := waitOwned(t, p, p+"-one")
	if got := owned[p+"-one"].Annotations["asked"]; got != p+"-" {
		t.Errorf("annotation asked = %q, want the input parameter %q", got, p+"-")
	}

	mu.Lock()
	answer = []string{"one", "two"}
	mu.Unlock()
	refreshSet(t, p)
	waitOwned(t, p, p+"-one", p+"-two")

	// A token the plugin refuses: the set reports the plugin's answer,
	// never the token, and keeps its apps.
	mu.Lock()
	token = "other"
	mu.Unlock()
	refreshSet(t, p)
	set := waitSetStatus(t, p, "an error condition", func(s *v1alpha1.ApplicationSetStatus) bool {
		c := setCondition(s, v1alpha1.ApplicationSetConditionErrorOccurred)
		return c != nil && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, "401")
	})
	if msg := setCondition(&set.Status, v1alpha1.ApplicationSetConditionErrorOccurred).Message; strings.Contains(msg, "tok-") {
		t.Errorf("the condition shows the token: %s", msg)
	}
	waitOwned(t, p, p+"-one", p+"-two")
}
