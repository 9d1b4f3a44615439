//go:build integration

package resolvers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/appstate"
)

// mergeSettings puts data into the graphcd-cm every test API follows,
// creating it first if no test has; tests set keys of their own.
func mergeSettings(t *testing.T, data map[string]string) {
	t.Helper()
	cms := cluster.Client.CoreV1().ConfigMaps(secretsNS)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: secretsNS, Name: "graphcd-cm"}, Data: data}
	_, err := cms.Create(t.Context(), cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		patch, _ := json.Marshal(map[string]any{"data": data})
		_, err = cms.Patch(t.Context(), "graphcd-cm", types.MergePatchType, patch, metav1.PatchOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Deep links: application.links and project.links give each app and
// project the links whose conditions hold, built from the objects; an
// unsafe URL gives none.
func TestDeepLinks(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	mergeSettings(t, map[string]string{
		"application.links": `
- url: https://dash.example.com/{{ .app.metadata.namespace }}/{{ .app.metadata.name }}?dest={{ .app.spec.destination.namespace }}&project={{ .project.metadata.name }}
  title: Dashboard
  icon.class: fa-chart
  if: app.metadata.name startsWith "linked"
- url: "javascript:alert(document.cookie)"
  title: Unsafe
`,
		"project.links": "- url: https://audit.example.com/?project={{ .project.metadata.name }}\n  title: Audit\n",
	})
	createApps(t, ns, appSpec{name: "linked-a", project: "default"}, appSpec{name: "other", project: "default"})
	const q = `query($ns: String, $n: String!) { application(name: $n, namespace: $ns) { links { title url description iconClass } } project(name: "default") { links { title url } } }`
	type link struct{ Title, URL, Description, IconClass string }
	var got struct {
		Application struct{ Links []link }
		Project     struct{ Links []link }
	}
	want := "https://dash.example.com/" + ns + "/linked-a?dest=linked-a&project=default"
	eventually(t, "the links", func() error {
		data(t, q, map[string]any{"ns": ns, "n": "linked-a"}, &got)
		if len(got.Application.Links) != 1 || len(got.Project.Links) != 1 {
			return errNotYet // the settings reader and the index catch up
		}
		return nil
	})
	if l := got.Application.Links[0]; l.Title != "Dashboard" || l.URL != want || l.IconClass != "fa-chart" {
		t.Errorf("app link %+v, want %s", l, want)
	}
	if l := got.Project.Links[0]; l.URL != "https://audit.example.com/?project=default" {
		t.Errorf("project link %+v", l)
	}
	// "other" may reach the index after "linked-a": wait until it is there.
	var other struct {
		Application *struct{ Links []link }
	}
	eventually(t, "the other app", func() error {
		data(t, q, map[string]any{"ns": ns, "n": "other"}, &other)
		if other.Application == nil {
			return errNotYet
		}
		return nil
	})
	if len(other.Application.Links) != 0 {
		t.Errorf("a link whose condition fails: %+v", other.Application.Links)
	}
}

// TestMeAndSettings reads the caller (anonymous until Auth) and the public
// settings from graphcd-cm, whose secrets never come out.
func TestMeAndSettings(t *testing.T) {
	t.Parallel()
	const secret = "dex-client-secret-value"
	mergeSettings(t, map[string]string{
		"url": "https://cd.example.com", "ui.bannercontent": "Freeze until Monday",
		"dex.config": "connectors:\n- type: github\n  name: GitHub\n  config: {clientSecret: " + secret + "}\n",
	})
	const q = `{ me { loggedIn username groups } settings { url uiBannerContent uiBannerPermanent ssoProviders } }`
	var got struct {
		Me struct {
			LoggedIn bool
			Username string
			Groups   []string
		}
		Settings struct {
			URL, UIBannerContent string
			UIBannerPermanent    bool
			SSOProviders         []string
		}
	}
	eventually(t, "settings read", func() error {
		_, resp := query(t, q, nil)
		if strings.Contains(string(resp.Data), secret) {
			t.Fatalf("a secret reached the response: %s", resp.Data)
		}
		data(t, q, nil, &got)
		if got.Settings.URL != "https://cd.example.com" {
			return errNotYet // the reader reuses an older read for a few seconds
		}
		return nil
	})
	if got.Me.LoggedIn || got.Me.Username != "anonymous" || len(got.Me.Groups) != 0 {
		t.Errorf("me = %+v", got.Me)
	}
	s := got.Settings
	if s.UIBannerContent != "Freeze until Monday" || s.UIBannerPermanent || len(s.SSOProviders) != 1 || s.SSOProviders[0] != "GitHub" {
		t.Errorf("settings = %+v", s)
	}
}

// resource.links give a live object of an application the links built
// from it, with Secret values masked.
func TestResourceDeepLinks(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	mergeSettings(t, map[string]string{"resource.links": `
- url: https://logs.example.com/?pod={{ .resource.metadata.name }}&app={{ .app.metadata.name }}&v={{ .resource.data.password }}
  title: Pod logs
  if: resource.kind == "Secret"
`})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "hunter2"}}
	if _, err := cluster.Client.CoreV1().Secrets(ns).Create(t.Context(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "linked"}
	if err := states.Put(t.Context(), appstate.State{App: key, ReconciledAt: time.Now(), Managed: []appstate.ManagedResource{
		{Version: "v1", Kind: "Secret", Namespace: ns, Name: "creds", Status: v1alpha1.SyncStatusCodeSynced},
	}}); err != nil {
		t.Fatal(err)
	}
	createApps(t, ns, appSpec{name: "linked"})
	waitCount(t, ns, 1)
	const q = `query($ns: String!) { application(name: "linked", namespace: $ns) { liveResource(group: "", kind: "Secret", namespace: $ns, name: "creds") { links { title url } } } }`
	var got struct {
		Application struct {
			LiveResource struct{ Links []struct{ Title, URL string } }
		}
	}
	eventually(t, "the resource's link", func() error {
		data(t, q, map[string]any{"ns": ns}, &got)
		if len(got.Application.LiveResource.Links) != 1 {
			return errNotYet
		}
		return nil
	})
	l := got.Application.LiveResource.Links[0]
	if !strings.HasPrefix(l.URL, "https://logs.example.com/?pod=creds&app=linked&v=") || strings.Contains(l.URL, "hunter2") || strings.Contains(l.URL, "aHVudGVyMg") {
		t.Errorf("link %+v: want the object's name, never its secret value", l)
	}
}
