package webhook_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/apiserver/webhook"
)

type counter struct{ n int }

func (c *counter) Refresh(context.Context, types.NamespacedName, bool) (*v1alpha1.Application, error) {
	c.n++
	return nil, nil
}

// TestMountedOnServer serves the handler as graphcd server does, mounted
// by apiserver.New: reachable by POST without logging in, and by POST only.
func TestMountedOnServer(t *testing.T) {
	idx := appindex.New()
	idx.Upsert(&v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "guestbook"},
		Spec:       v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "git@github.com:team/guestbook.git", TargetRevision: "main"}},
	})
	refresher := &counter{}
	srv, err := apiserver.New(apiserver.Options{Webhook: &webhook.Options{Apps: idx, Refresher: refresher, Secrets: webhook.StaticSecrets{}}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("testdata/github-push.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodPost} {
		r := httptest.NewRequest(method, "/api/webhook", bytes.NewReader(body))
		r.Header.Set("X-GitHub-Event", "push")
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, r)
		if ok := w.Code == http.StatusOK; ok != (method == http.MethodPost) {
			t.Errorf("%s /api/webhook: status %d", method, w.Code)
		}
	}
	if refresher.n != 1 {
		t.Errorf("%d refreshes, want 1 (from the POST)", refresher.n)
	}
}
