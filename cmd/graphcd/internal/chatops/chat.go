package chatops

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// bot holds what the handlers and the event loop share.
type bot struct {
	server        *url.URL
	token         string
	webhookURL    string
	signingSecret []byte
	identities    *Identities
	http          *http.Client // to the chat
	api           *http.Client // to graphcd
	apiTLS        *tls.Config  // graphcd's, for the websocket too; nil for the defaults
	log           *slog.Logger
	// now is the clock the signature check uses.
	now func() time.Time
	// pingEvery is how often the event socket is pinged.
	pingEvery time.Duration
	// followers holds a token per start followHold follows; following
	// counts them, so that Run can wait for them.
	followers chan struct{}
	following sync.WaitGroup
}

func newBot(cfg Config, log *slog.Logger) *bot {
	apiTLS := serverTLS(cfg.ServerCA)
	api := &http.Client{Timeout: 10 * time.Second}
	if apiTLS != nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A copy: the transport adds "h2" to its NextProtos, which the
		// websocket, an HTTP/1.1 upgrade, must not offer.
		t.TLSClientConfig = apiTLS.Clone()
		api.Transport = t
	}
	return &bot{
		server:        cfg.Server,
		token:         cfg.Token,
		webhookURL:    cfg.WebhookURL,
		signingSecret: []byte(cfg.SigningSecret),
		identities:    cfg.Identities,
		http:          &http.Client{Timeout: 10 * time.Second},
		api:           api,
		apiTLS:        apiTLS,
		log:           log,
		now:           time.Now,
		pingEvery:     pingInterval,
		followers:     make(chan struct{}, maxFollowers),
	}
}

// serverTLS verifies graphcd's certificate with ca (PEM) when given, else
// with the system's roots (nil).
func serverTLS(ca []byte) *tls.Config {
	if len(ca) == 0 {
		return nil
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca) // checked by Load
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// alertText is the chat message for e, and whether e deserves one: an
// operation that ended Failed or Error, health that turned Degraded or
// Missing, or events lost because the bot fell behind. (A sync held for
// approval is heldText's.)
func alertText(e event) (string, bool) {
	app := appText(e)
	switch {
	case e.Lagged:
		// graphcd dropped events for this subscriber; the Applications
		// themselves are the truth, so point there rather than guess.
		return ":warning: Some graphcd application events were missed because the bot fell behind; check the applications in graphcd.", true
	case e.Type == "OperationPhaseChanged" && (e.OperationPhase == "Failed" || e.OperationPhase == "Error"):
		text := ":x: Sync of " + app + " ended " + e.OperationPhase
		if e.Message != "" {
			text += ": " + slackEscape(e.Message)
		}
		return text, true
	case e.Type == "HealthChanged" && (e.Health == "Degraded" || e.Health == "Missing"):
		return ":warning: " + app + " is " + e.Health, true
	}
	return "", false
}

// appText names e's application in a message.
func appText(e event) string {
	app := "*" + slackEscape(e.Name) + "*"
	if e.Namespace != "" {
		app += " (" + slackEscape(e.Namespace) + ")"
	}
	return app
}

// heldText says that the sync of e's application waits for approval (h),
// who may give it and how.
func heldText(e event, h *heldOperation) string {
	app := appText(e)
	by := "An automated sync of " + app
	if h.InitiatedBy != "" {
		by = "The sync of " + app + " requested by " + slackEscape(h.InitiatedBy)
	}
	n := max(h.ApprovalsNeeded, 1)
	approvals := fmt.Sprintf("%d approvals", n)
	if n == 1 {
		approvals = "1 approval"
	}
	from := "from anyone allowed to approve it"
	if len(h.Groups) > 0 {
		groups := make([]string, len(h.Groups))
		for i, g := range h.Groups {
			groups[i] = "*" + slackEscape(g) + "*"
		}
		from = "from " + strings.Join(groups, " or ")
	}
	cmd := "/approve " + slackEscape(e.Name)
	if e.Namespace != "" {
		cmd += " " + slackEscape(e.Namespace)
	}
	return fmt.Sprintf(":hourglass_flowing_sand: %s waits for %s %s until %s. To approve: `%s`",
		by, approvals, from, h.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"), cmd)
}

// slackEscape escapes the three characters Slack's mrkdwn treats as
// markup, so an app or message cannot mention users or forge links.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// post sends text to the chat's incoming webhook as {"text": ...}.
func (b *bot) post(ctx context.Context, text string) error {
	body, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		return err
	}
	// The webhook URL is the operator's configuration, not a request's.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.webhookURL, bytes.NewReader(body)) //nolint:gosec // G704: see above
	if err != nil {
		return fmt.Errorf("webhook request: %w", withoutURL(err))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req) //nolint:gosec // G704: the operator's webhook URL
	if err != nil {
		return withoutURL(err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("the webhook answered HTTP %d", resp.StatusCode)
	}
	return nil
}
