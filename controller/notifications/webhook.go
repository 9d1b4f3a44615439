package notifications

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/argoproj/notifications-engine/pkg/services"
	"sigs.k8s.io/yaml"
)

// Bounds of a webhook send: the endpoint is whatever the configuration
// names, and must cost neither unbounded time nor memory.
const (
	webhookTimeout    = 10 * time.Second
	webhookMaxRetries = 10
	webhookMaxWait    = 30 * time.Second
	webhookErrBody    = 256
	// webhookRetryBudget bounds the waits between one send's retries;
	// the controller's own retries, with backoff, come after.
	webhookRetryBudget = 15 * time.Second
)

// webhookSender sends service.webhook.* notifications as Argo CD's
// webhook service does (options, method, path and body alike), through
// graphcd's own client: the engine's logs each request's URL, where a
// token may sit, and reads error responses whole.
type webhookSender struct {
	opts   services.WebhookOptions
	client *http.Client
}

// webhookSettings are service.webhook.*'s settings: Argo CD's, with the
// retry waits as durations ("1s") or, as the engine reads them, numbers
// of nanoseconds.
type webhookSettings struct {
	services.WebhookOptions
	RetryWaitMin flexDuration `json:"retryWaitMin"`
	RetryWaitMax flexDuration `json:"retryWaitMax"`
}

type flexDuration time.Duration

func (d *flexDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		*d = flexDuration(v)
		return err
	}
	var n int64
	err := json.Unmarshal(b, &n)
	*d = flexDuration(n)
	return err
}

// newWebhookSender reads the service's settings, with the Secret's values
// in place of its $key references.
func newWebhookSender(settings string, secret map[string][]byte) (*webhookSender, error) {
	var raw webhookSettings
	if err := yaml.Unmarshal([]byte(settings), &raw); err != nil {
		return nil, fmt.Errorf("webhook settings: %w", err)
	}
	opts := raw.WebhookOptions
	opts.RetryWaitMin, opts.RetryWaitMax = time.Duration(raw.RetryWaitMin), time.Duration(raw.RetryWaitMax)
	fill := func(s string) string { return fillSecrets(s, secret) }
	opts.URL = fill(opts.URL)
	for i := range opts.Headers {
		opts.Headers[i].Value = fill(opts.Headers[i].Value)
	}
	if b := opts.BasicAuth; b != nil {
		b.Username, b.Password = fill(b.Username), fill(b.Password)
	}
	if u, err := url.Parse(opts.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("webhook settings: url must be an http or https URL")
	}
	// Argo CD's defaults: up to three retries of a failed request, waiting
	// from one to five seconds; retryMax -1 sends once.
	switch {
	case opts.RetryMax == 0:
		opts.RetryMax = 3
	case opts.RetryMax < 0:
		opts.RetryMax = 0
	case opts.RetryMax > webhookMaxRetries:
		opts.RetryMax = webhookMaxRetries
	}
	if opts.RetryWaitMin <= 0 {
		opts.RetryWaitMin = time.Second
	}
	if opts.RetryWaitMax <= 0 {
		opts.RetryWaitMax = 5 * time.Second
	}
	opts.RetryWaitMin, opts.RetryWaitMax = min(opts.RetryWaitMin, webhookMaxWait), min(opts.RetryWaitMax, webhookMaxWait)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if opts.InsecureSkipVerify {
		transport.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // G402: the administrator's insecureSkipVerify, as Argo CD's
	}
	return &webhookSender{opts: opts, client: &http.Client{Transport: transport, Timeout: webhookTimeout}}, nil
}

// Send sends n to dest: the message as the body of a GET to url, unless
// the notification has a webhook part for this service, whose method,
// path (appended to url) and body then apply.
func (w *webhookSender) Send(n services.Notification, dest services.Destination) error {
	method, target, body := http.MethodGet, w.opts.URL, n.Message
	if part, ok := n.Webhook[dest.Service]; ok {
		body = part.Body
		if part.Method != "" {
			method = part.Method
		}
		if part.Path != "" {
			target = strings.TrimRight(target, "/") + "/" + strings.TrimLeft(part.Path, "/")
		}
	}
	wait, deadline := w.opts.RetryWaitMin, time.Now().Add(webhookRetryBudget)
	for attempt := 0; ; attempt++ {
		retry, err := w.once(method, target, body)
		if err == nil || !retry || attempt >= w.opts.RetryMax || time.Now().Add(wait).After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, w.opts.RetryWaitMax)
	}
}

// once sends one request; retry says whether a failure may pass (a
// transport error, 429 or 5xx). Errors name the host, never the path or
// query, which may hold a token.
func (w *webhookSender) once(method, target, body string) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewBufferString(body))
	if err != nil {
		return false, fmt.Errorf("webhook request: invalid method or URL")
	}
	for _, h := range w.opts.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	if b := w.opts.BasicAuth; b != nil {
		req.SetBasicAuth(b.Username, b.Password)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its message repeats the whole URL
		}
		return true, fmt.Errorf("webhook %s %s: %w", method, req.URL.Host, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return false, nil
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, webhookErrBody))
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500,
		fmt.Errorf("webhook %s %s answered %d: %s", method, req.URL.Host, resp.StatusCode, strings.TrimSpace(string(head)))
}
