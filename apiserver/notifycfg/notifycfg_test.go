package notifycfg

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/services"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Without a ConfigMap the built-in catalog serves; a ConfigMap that does
// not parse keeps the last good configuration and says why without the
// Secret's values; sends reach the service and are rate limited.
func TestUpdateAndSend(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Header.Get("Authorization") + " " + string(b))
		if strings.Contains(string(b), "fail") {
			http.Error(w, "refused "+r.Header.Get("Authorization"), http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	s := New(nil)
	cfg, err := s.Config()
	if err != nil || cfg.Trigger("on-sync-failed") == nil || cfg.ServiceType("hook") != "" {
		t.Fatalf("before any configuration: %v, want the catalog alone", err)
	}
	secret := &corev1.Secret{Data: map[string][]byte{"token": []byte("s3cr3t-token")}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-notifications-cm"}, Data: map[string]string{
		"service.webhook.hook": "url: " + srv.URL + "\nretryMax: -1\nheaders:\n- {name: Authorization, value: Bearer $token}\n",
	}}
	s.Update(cm, secret)
	if cfg, err = s.Config(); err != nil || cfg.ServiceType("hook") != "webhook" {
		t.Fatalf("configured: %v, service type %q", err, cfg.ServiceType("hook"))
	}
	broken := cm.DeepCopy()
	broken.Data["trigger.bad"] = "- when: app.status ==\n  send: [nope]\n  description: s3cr3t-token\n"
	s.Update(broken, secret)
	kept, err := s.Config()
	if err == nil || kept != cfg || strings.Contains(err.Error(), "s3cr3t-token") {
		t.Errorf("a ConfigMap that does not parse: config kept %v, error %v", kept == cfg, err)
	}
	s.Update(cm, secret)
	if cfg, err = s.Config(); err != nil {
		t.Fatal(err)
	}

	dest := services.Destination{Service: "hook"}
	if err := s.Send(t.Context(), cfg, services.Notification{Message: "hello"}, dest); err != nil {
		t.Fatal(err)
	}
	if g := got.Load(); g != "Bearer s3cr3t-token hello" {
		t.Errorf("the service got %q", g)
	}
	err = s.Send(t.Context(), cfg, services.Notification{Message: "fail"}, dest)
	if err == nil || strings.Contains(err.Error(), "s3cr3t-token") || !strings.Contains(err.Error(), "***") {
		t.Errorf("a refused send: %v, want the token masked", err)
	}
	if err := s.Send(t.Context(), cfg, services.Notification{Message: "x"}, services.Destination{Service: "nope"}); err == nil {
		t.Error("a service that is not configured: no error")
	}
	limited := false
	for range sendBurst + 2 {
		if err := s.Send(t.Context(), cfg, services.Notification{Message: "x"}, dest); errors.Is(err, ErrRateLimited) {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("no rate limit")
	}
	s.Update(nil, secret)
	if cfg, _ := s.Config(); cfg.ServiceType("hook") != "" {
		t.Error("the ConfigMap is gone, its services stay")
	}
}
