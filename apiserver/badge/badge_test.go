package badge

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
)

func app(ns, name, project string, health v1alpha1.HealthStatusCode, sync v1alpha1.SyncStatusCode) *v1alpha1.Application {
	a := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{Project: project}}
	a.Status.Health.Status, a.Status.Sync.Status = health, sync
	a.Status.Sync.Revision = "0123456789abcdef0123456789abcdef01234567"
	return a
}

// get serves url and returns the image's text (its <text> elements, in
// order) after checking it is well-formed SVG.
func get(t *testing.T, h http.Handler, url string) string {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, url, nil))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("%s: status %d, content type %q", url, w.Code, w.Header().Get("Content-Type"))
	}
	var doc struct {
		XMLName xml.Name
		Texts   []string `xml:"g>text"`
	}
	if err := xml.Unmarshal(w.Body.Bytes(), &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Fatalf("%s: not SVG (%v): %s", url, err, w.Body)
	}
	return strings.Join(doc.Texts, " ")
}

func TestBadges(t *testing.T) {
	idx := appindex.New()
	idx.Upsert(app("graphcd", "guestbook", "web", v1alpha1.HealthStatusHealthy, v1alpha1.SyncStatusCodeSynced))
	idx.Upsert(app("graphcd", "api", "web", v1alpha1.HealthStatusProgressing, v1alpha1.SyncStatusCodeOutOfSync))
	idx.Upsert(app("team-a", "worker", "batch", v1alpha1.HealthStatusDegraded, v1alpha1.SyncStatusCodeSynced))
	enabled := true
	h := New(Options{Apps: idx, Namespace: "graphcd", Enabled: func() bool { return enabled }})
	for url, want := range map[string]string{
		"/api/badge?name=guestbook":                                     "Healthy Synced",
		"/api/badge?name=guestbook&showAppName=true":                    "guestbook Healthy Synced",
		"/api/badge?name=guestbook&revision=true":                       "Healthy Synced 0123456",
		"/api/badge?name=guestbook&revision=true&keepFullRevision=true": "Healthy Synced 0123456789abcdef0123456789abcdef01234567",
		"/api/badge?name=worker&appNamespace=team-a":                    "Degraded Synced",
		"/api/badge?name=worker":                                        "Unknown Unknown",
		"/api/badge?name=%3Cscript%3E":                                  "Unknown Unknown",
		"/api/badge?project=web":                                        "Progressing OutOfSync",
		"/api/badge?project=web&project=batch":                          "Degraded OutOfSync",
		"/api/badge?project=none":                                       "Unknown Unknown",
	} {
		if got := get(t, h, url); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
	// Off, every request gets the same image: no badge tells what exists.
	enabled = false
	if got := get(t, h, "/api/badge?name=guestbook&showAppName=true"); got != "Unknown Unknown" {
		t.Errorf("disabled: %q", got)
	}
}
