package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/graphcd/graphcd/internal/tracing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver/appindex"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/repourl"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the largest body read (Argo CD's
	// webhook.maxPayloadSizeMB, which defaults higher; push payloads are
	// far smaller than this).
	DefaultMaxBodyBytes = 50 << 20
	// DefaultMaxInFlightBytes bounds the body bytes of all requests
	// being read at once: two bodies of the largest size.
	DefaultMaxInFlightBytes = 2 * DefaultMaxBodyBytes
	// DefaultParallelism is how many apps are refreshed at once.
	DefaultParallelism = 4
)

// Apps finds Applications in memory; *appindex.Index is one.
type Apps interface {
	Page(q appindex.Query) (appindex.Page, error)
}

// Refresher asks the controller to compare an app again;
// appops.Service is one.
type Refresher interface {
	Refresh(ctx context.Context, key types.NamespacedName, hard bool) (*v1alpha1.Application, error)
}

// Queue hands the apps a push matches straight to a controller in the
// same process; *controller.Controller is one.
type Queue interface {
	// RefreshPushed queues apps for comparison after forgetting their
	// repositories' cached revisions, and returns the apps it cannot serve.
	RefreshPushed(ctx context.Context, apps []types.NamespacedName) (rest []types.NamespacedName, err error)
}

// Sets asks the controller to generate again the ApplicationSets whose
// git generators read a pushed repository, or whose pull request
// generators list the pull requests of an event's; appset.PushRefresher
// is one.
type Sets interface {
	// RefreshPushed refreshes the sets for which reads says the push
	// concerns a git generator's repoURL and revision, and returns how
	// many.
	RefreshPushed(ctx context.Context, reads func(repoURL, revision string) bool) (int, error)
	// RefreshPullRequest refreshes the sets whose pullRequest generators
	// read repo, and returns how many.
	RefreshPullRequest(ctx context.Context, repo appset.PullRequestRepo) (int, error)
}

// Limits reads the body size limit from configuration; *catalog.Settings
// is one.
type Limits interface {
	WebhookMaxPayloadBytes(ctx context.Context, def int64) int64
}

// Options configure a Handler.
type Options struct {
	// Apps are the Applications pushes are matched against.
	Apps Apps
	// AppsLoaded, when set, is closed once Apps holds every Application;
	// until then a push is answered 503 rather than matched against a
	// partial list, so that the provider shows the delivery as failed and
	// it can be redelivered.
	AppsLoaded <-chan struct{}
	// Queue, when set, takes the matched apps first; Refresher refreshes
	// those it returns, through the API.
	Queue Queue
	// Refresher refreshes the apps a push matches.
	Refresher Refresher
	// Sets, when set, refreshes the ApplicationSets a push concerns.
	Sets Sets
	// Secrets hold the providers' secrets (see the Key constants).
	Secrets Secrets
	// MaxBodyBytes bounds the request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Limits, when set, gives the bound per request instead (e.g. from
	// graphcd-cm's webhook.maxPayloadSizeMB), with MaxBodyBytes as its
	// default.
	Limits Limits
	// MaxInFlightBytes bounds the body bytes held by all requests at
	// once; a request that does not fit is answered 503 at once. It also
	// caps the per-request limit. 0 means DefaultMaxInFlightBytes.
	MaxInFlightBytes int64
	// Parallelism bounds concurrent refreshes; 0 means
	// DefaultParallelism.
	Parallelism int
	// Logger gets a line for every request refused or acted on.
	Logger *slog.Logger
}

// Handler serves POST /api/webhook. Create it with New.
type Handler struct {
	opts   Options
	log    *slog.Logger
	budget *byteBudget
	// unsecured remembers the providers already warned about having no
	// secret configured.
	unsecured sync.Map
}

// New returns a handler with opts.
func New(opts Options) *Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Parallelism <= 0 {
		opts.Parallelism = DefaultParallelism
	}
	if opts.MaxInFlightBytes <= 0 {
		opts.MaxInFlightBytes = DefaultMaxInFlightBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{opts: opts, log: log.With("component", "webhook"), budget: &byteBudget{size: opts.MaxInFlightBytes}}
}

// ServeHTTP checks, parses and acts on one webhook delivery. It answers
// 200 for a push (refreshed or matching nothing) and for events it
// ignores, 400 for what no provider sent, 401 for a failed secret check,
// 413 for a body over the limit and 503 before the secrets are loaded or
// when the bodies being read already hold the in-flight budget.
//
// A secret sent in a header (GitLab's token, Bitbucket Cloud's UUID,
// Azure DevOps' basic auth) is checked before the body is read, and so is
// the presence and form of a signature; only a body signed over (GitHub,
// Gitea/Gogs, Bitbucket Server) must be read, within the budget, before
// its signature can be checked.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, span := tracer.Start(r.Context(), "webhook", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	if id := deliveryID(r.Header); id != "" {
		ctx = context.WithValue(ctx, deliveryKey{}, id)
	}
	limit := h.opts.MaxBodyBytes
	if h.opts.Limits != nil {
		limit = h.opts.Limits.WebhookMaxPayloadBytes(ctx, limit)
	}
	limit = min(limit, h.budget.size)
	if r.ContentLength > limit {
		h.refuse(ctx, w, http.StatusRequestEntityTooLarge, "body too large",
			slog.Int64("content_length", r.ContentLength), slog.Int64("limit", limit))
		return
	}
	p := detectByHeader(r.Header)
	// Azure DevOps sends no header of its own: a request without another
	// provider's header is checked as if it came from Azure DevOps.
	candidate := cmp.Or(p, &azureDevOps)
	secrets, configured, err := h.secrets(candidate)
	if err != nil {
		h.refuse(ctx, w, http.StatusServiceUnavailable, "webhook secrets not loaded yet", slog.String("provider", candidate.name))
		return
	}
	if configured && candidate.preverify(r.Header, secrets) != nil {
		h.refuse(ctx, w, http.StatusUnauthorized, "webhook secret or signature check failed", slog.String("provider", candidate.name))
		return
	}
	body, release, err := h.readBody(w, r, limit)
	defer release()
	switch {
	case errors.Is(err, errBudget):
		w.Header().Set("Retry-After", "1")
		h.refuse(ctx, w, http.StatusServiceUnavailable, "too many webhook deliveries being read; retry later",
			slog.Int64("content_length", r.ContentLength), slog.Int64("in_flight_limit", h.budget.size))
		return
	case errors.Is(err, errTooLarge):
		h.refuse(ctx, w, http.StatusRequestEntityTooLarge, "body too large", slog.Int64("limit", limit))
		return
	case err != nil:
		h.refuse(ctx, w, http.StatusBadRequest, "cannot read body", slog.String("err", err.Error()))
		return
	}
	if p == nil {
		p = detectByBody(body)
	}
	if p == nil {
		h.refuse(ctx, w, http.StatusBadRequest, "unknown webhook: no supported provider's event header or payload")
		return
	}
	if status, msg := h.authenticate(p, r.Header, body); status != 0 {
		h.refuse(ctx, w, status, msg, slog.String("provider", p.name))
		return
	}
	event, isPush := p.event(r.Header, body)
	if parse := pullRequestParsers[p.name]; !isPush && parse != nil {
		if repo, ok, err := parse(event, body); ok {
			release()
			h.pullRequest(ctx, w, p, repo, err)
			return
		}
	}
	if !isPush {
		h.log.LogAttrs(ctx, slog.LevelDebug, "webhook event ignored: not a push",
			slog.String("provider", p.name), slog.String("event", clip(event)))
		reply(w, http.StatusOK, "event ignored")
		return
	}
	push, err := p.parse(body)
	release() // body is not used past here

	if err != nil {
		h.refuse(ctx, w, http.StatusBadRequest, err.Error(), slog.String("provider", p.name))
		return
	}
	push.Provider = p.name
	if !h.loaded() {
		h.refuse(ctx, w, http.StatusServiceUnavailable, "applications not loaded yet", slog.String("provider", p.name))
		return
	}
	if failed := h.refresh(ctx, push); failed > 0 {
		reply(w, http.StatusInternalServerError, fmt.Sprintf("%d applications could not be refreshed", failed))
		return
	}
	reply(w, http.StatusOK, "push received")
}

var tracer = tracing.NewTracer("github.com/graphcd/graphcd/apiserver/webhook")

// pullRequest refreshes the ApplicationSets a pull request event of
// repo concerns (err: its payload could not be read).
func (h *Handler) pullRequest(ctx context.Context, w http.ResponseWriter, p *provider, repo appset.PullRequestRepo, err error) {
	if err != nil {
		h.refuse(ctx, w, http.StatusBadRequest, err.Error(), slog.String("provider", p.name))
		return
	}
	attrs := []slog.Attr{slog.String("provider", p.name), slog.String("owner", clip(repo.Owner)), slog.String("repo", clip(repo.Repo))}
	if h.opts.Sets == nil {
		h.log.LogAttrs(ctx, slog.LevelDebug, "webhook pull request ignored: no ApplicationSets here", attrs...)
		reply(w, http.StatusOK, "event ignored")
		return
	}
	n, err := h.opts.Sets.RefreshPullRequest(context.WithoutCancel(ctx), repo)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "webhook pull request: cannot refresh ApplicationSets", append(attrs, slog.String("err", err.Error()))...)
		reply(w, http.StatusInternalServerError, "ApplicationSets could not be refreshed")
		return
	}
	h.log.LogAttrs(ctx, slog.LevelInfo, "webhook pull request", append(attrs, slog.Int("applicationsets", n))...)
	reply(w, http.StatusOK, "pull request received")
}

// loaded reports whether the Applications are all known.
func (h *Handler) loaded() bool {
	if h.opts.AppsLoaded == nil {
		return true
	}
	select {
	case <-h.opts.AppsLoaded:
		return true
	default:
		return false
	}
}

// secrets returns p's configured secrets (in p.secretKeys' order) and
// whether any is set; it fails until the secrets are loaded.
func (h *Handler) secrets(p *provider) (secrets []string, configured bool, err error) {
	secrets = make([]string, len(p.secretKeys))
	for i, k := range p.secretKeys {
		v, err := h.opts.Secrets.Lookup(k)
		if err != nil {
			return nil, false, err
		}
		secrets[i] = v
		configured = configured || v != ""
	}
	return secrets, configured, nil
}

// authenticate checks the request against the provider's secrets. It
// returns 0 when the request may go on.
func (h *Handler) authenticate(p *provider, header http.Header, body []byte) (status int, msg string) {
	secrets, configured, err := h.secrets(p)
	if err != nil {
		return http.StatusServiceUnavailable, "webhook secrets not loaded yet"
	}
	if !configured {
		if _, warned := h.unsecured.LoadOrStore(p.name, true); !warned {
			h.log.Warn("webhook accepted without a secret check: set one in "+SecretName+" to refuse forged deliveries",
				"provider", p.name, "keys", p.secretKeys)
		}
		return 0, ""
	}
	if err := p.verify(header, body, secrets); err != nil {
		return http.StatusUnauthorized, "webhook secret or signature check failed"
	}
	return 0, ""
}

// refresh refreshes every app push matches and returns how many failed.
func (h *Handler) refresh(ctx context.Context, push Push) (failed int) {
	m := newMatcher(push)
	attrs := []slog.Attr{
		slog.String("provider", push.Provider),
		slog.Any("repo", logURLs(push.RepoURLs)),
		slog.Any("refs", refNames(push.Refs)),
	}
	if id, ok := ctx.Value(deliveryKey{}).(string); ok {
		attrs = append(attrs, slog.String("delivery", id))
	}
	if m.empty() {
		h.log.LogAttrs(ctx, slog.LevelInfo, "webhook push ignored: no repository URL or ref to match", attrs...)
		return 0
	}
	keys, err := h.matching(m)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "webhook push: cannot list applications", append(attrs, slog.String("err", err.Error()))...)
		return 1
	}
	// The provider may hang up; the refreshes it asked for still happen.
	ctx = context.WithoutCancel(ctx)
	if h.opts.Sets != nil {
		sets, err := h.opts.Sets.RefreshPushed(ctx, m.git)
		if err != nil {
			failed++
			h.log.LogAttrs(ctx, slog.LevelError, "webhook push: cannot refresh ApplicationSets", append(attrs, slog.String("err", err.Error()))...)
		}
		attrs = append(attrs, slog.Int("applicationsets", sets))
	}
	matched := len(keys)
	if h.opts.Queue != nil {
		if keys, err = h.opts.Queue.RefreshPushed(ctx, keys); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "webhook push: controller queue refused; refreshing through the API",
				append(attrs, slog.String("err", err.Error()))...)
		}
	}
	queued := matched - len(keys)
	trace.SpanFromContext(ctx).SetAttributes(attribute.String("graphcd.webhook.provider", push.Provider),
		attribute.Int("graphcd.webhook.matched", matched))
	var nFailed atomic.Int64
	sem := make(chan struct{}, h.opts.Parallelism)
	var wg sync.WaitGroup
	for _, key := range keys {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := h.opts.Refresher.Refresh(ctx, key, false)
			if err != nil && !apierrors.IsNotFound(err) {
				nFailed.Add(1)
				h.log.LogAttrs(ctx, slog.LevelError, "webhook push: cannot refresh application",
					slog.String("app", key.String()), slog.String("err", err.Error()))
			}
		})
	}
	wg.Wait()
	failed += int(nFailed.Load())
	h.log.LogAttrs(ctx, slog.LevelInfo, "webhook push", append(attrs,
		slog.Int("matched", matched), slog.Int("queued", queued), slog.Int("annotated", len(keys)), slog.Int("failed", failed))...)
	return failed
}

// matching returns the keys of the apps m selects, from memory.
func (h *Handler) matching(m *matcher) ([]types.NamespacedName, error) {
	var keys []types.NamespacedName
	q := appindex.Query{First: appindex.MaxFirst, Filter: appindex.Filter{Allow: m.app}}
	for {
		page, err := h.opts.Apps.Page(q)
		if err != nil {
			return nil, err
		}
		for _, a := range page.Items {
			keys = append(keys, types.NamespacedName{Namespace: a.Namespace, Name: a.Name})
		}
		if !page.HasNextPage {
			return keys, nil
		}
		q.After = page.EndCursor
	}
}

// deliveryKey carries a delivery's id in the request context, for logs.
type deliveryKey struct{}

// deliveryHeaders name a delivery, so that a log line can be found again
// in the provider's list of recent deliveries.
var deliveryHeaders = []string{
	"X-GitHub-Delivery", "X-Gitlab-Event-UUID", "X-Gitea-Delivery", "X-Gogs-Delivery",
	"X-Request-UUID", // Bitbucket Cloud
	"X-Request-Id",   // Bitbucket Server (or a proxy)
}

// deliveryID returns the provider's id of the delivery when it is short
// and plain (it goes into logs), "" otherwise.
func deliveryID(h http.Header) string {
	for _, name := range deliveryHeaders {
		id := h.Get(name)
		if id == "" || len(id) > 64 {
			continue
		}
		plain := true
		for _, c := range id {
			plain = plain && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '{' || c == '}')
		}
		if plain {
			return id
		}
	}
	return ""
}

// refuse answers status with msg and logs why.
func (h *Handler) refuse(ctx context.Context, w http.ResponseWriter, status int, msg string, attrs ...slog.Attr) {
	attrs = append(attrs, slog.Int("status", status))
	if id, ok := ctx.Value(deliveryKey{}).(string); ok {
		attrs = append(attrs, slog.String("delivery", id))
	}
	h.log.LogAttrs(ctx, slog.LevelWarn, "webhook refused: "+msg, attrs...)
	reply(w, status, msg)
}

func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// maxLogValue bounds what a payload can put in one log value.
const maxLogValue = 200

// clip shortens a value from a payload for a log line.
func clip(s string) string {
	if len(s) > maxLogValue {
		return s[:maxLogValue] + "..."
	}
	return s
}

// logURLs are a payload's repository URLs as logged: redacted (a payload
// could carry a credential in it), clipped, and
// without duplicates or blanks.
func logURLs(urls []string) []string {
	var out []string
	for _, s := range urls {
		if s == "" {
			continue
		}
		s = clip(repourl.Redact(s))
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

func refNames(refs []Ref) []string {
	out := make([]string, 0, min(len(refs), 10))
	for _, r := range refs[:min(len(refs), 10)] {
		out = append(out, clip(r.Name))
	}
	return out
}
