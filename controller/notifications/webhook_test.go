package notifications

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/services"
)

// The webhook sender sends as Argo CD's webhook service: the message as
// a GET's body by default, the template's method, path and body when it
// has a part for the service, headers and basic auth from the Secret; it
// retries 5xx up to retryMax, and its errors never show the URL's path or
// query, where a token may sit, nor more than the head of the answer.
func TestWebhookSender(t *testing.T) {
	var calls atomic.Int32
	type request struct{ method, path, query, user, pass, header, body string }
	got := make(chan request, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		user, pass, _ := r.BasicAuth()
		got <- request{r.Method, r.URL.Path, r.URL.RawQuery, user, pass, r.Header.Get("X-Team"), string(b)}
		if strings.HasPrefix(r.URL.Path, "/flaky") && calls.Add(1) <= 2 {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, strings.Repeat("upstream down ", 1000))
			return
		}
		if strings.HasPrefix(r.URL.Path, "/broken") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
	}))
	defer srv.Close()
	secret := map[string][]byte{"token": []byte("tok-9f8e7d"), "pass": []byte("p4ss-word")}
	settings := "url: " + srv.URL + "/hooks/$token?key=$token\nheaders:\n- {name: X-Team, value: payments}\nbasicAuth: {username: graphcd, password: $pass}\nretryWaitMin: 1ms\nretryWaitMax: 2ms\n"
	w, err := newWebhookSender(settings, secret)
	if err != nil {
		t.Fatal(err)
	}
	dest := services.Destination{Service: "hook"}
	if err := w.Send(services.Notification{Message: "hello"}, dest); err != nil {
		t.Fatal(err)
	}
	want := request{"GET", "/hooks/tok-9f8e7d", "key=tok-9f8e7d", "graphcd", "p4ss-word", "payments", "hello"}
	if r := <-got; r != want {
		t.Errorf("default request %+v, want %+v", r, want)
	}

	flaky, _ := newWebhookSender("url: "+srv.URL+"/flaky/$token\nretryWaitMin: 1ms\nretryWaitMax: 2ms\n", secret)
	n := services.Notification{Webhook: services.WebhookNotifications{"hook": {Method: "POST", Path: "/deploys", Body: `{"ok": true}`}}}
	if err := flaky.Send(n, dest); err != nil {
		t.Fatalf("after two 502s: %v", err)
	}
	for i := 0; i < 3; i++ {
		if r := <-got; r.method != "POST" || r.path != "/flaky/tok-9f8e7d/deploys" || r.body != `{"ok": true}` {
			t.Errorf("attempt %d: %+v", i+1, r)
		}
	}

	once, _ := newWebhookSender("url: "+srv.URL+"/broken/$token\nretryMax: -1\n", secret)
	err = once.Send(services.Notification{Message: "x"}, dest)
	if err == nil || !strings.Contains(err.Error(), "answered 400") || strings.Contains(err.Error(), "tok-9f8e7d") {
		t.Errorf("a 400: %v", err)
	}
	if len(got) != 1 {
		t.Errorf("a 400 was retried: %d requests", len(got))
	}
	down, _ := newWebhookSender("url: http://127.0.0.1:1/hooks/$token\nretryMax: -1\n", secret)
	if err := down.Send(services.Notification{}, dest); err == nil || strings.Contains(err.Error(), "tok-9f8e7d") {
		t.Errorf("an endpoint that is down: %v", err)
	}
	if _, err := newWebhookSender("url: file:///etc/passwd\n", nil); err == nil {
		t.Error("a file URL: no error")
	}
}
