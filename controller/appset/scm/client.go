package scm

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Bounds of the requests one generator makes; Options may lower or
// raise them.
const (
	// DefaultMaxResponseBytes bounds one response body.
	DefaultMaxResponseBytes = 4 << 20
	// DefaultMaxPages bounds the pages of one listing.
	DefaultMaxPages = 100
	// DefaultMaxRequests bounds the requests of one generator run: a
	// listing, a branch lookup per repository, a path check per filter.
	DefaultMaxRequests = 10000
	// DefaultMaxResults bounds the repositories, branches or pull
	// requests one listing and one generator return (appset.MaxParams).
	DefaultMaxResults = 10000

	// maxRedirects bounds the redirects one request follows.
	maxRedirects = 5
	// maxMessage bounds the part of a forge's error body an error shows.
	maxMessage = 200
)

// errNotFound is wrapped for a 404 answer.
var errNotFound = errors.New("not found")

// Options carry and bound the requests to the forges.
type Options struct {
	// Client returns the HTTP client to reach a forge with; insecure is
	// the spec's insecure field (TLS certificates not verified). The
	// caller's client enforces graphcd's egress rules. Nil uses a client
	// of Go's default transport.
	Client func(insecure bool) *http.Client
	// MaxResponseBytes bounds one response body; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxPages bounds the pages of one listing; 0 means DefaultMaxPages.
	MaxPages int
	// MaxRequests bounds the requests of one generator run; 0 means
	// DefaultMaxRequests.
	MaxRequests int
	// MaxResults bounds the items of one listing and the parameter sets
	// of one generator; 0 means DefaultMaxResults.
	MaxResults int
	// Allow, when set, says whether the forge at api (the spec's, or the
	// provider's public default) may be asked; its error refuses.
	Allow func(api string) error
}

func (o Options) withDefaults() Options {
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.MaxResults <= 0 {
		o.MaxResults = DefaultMaxResults
	}
	if o.Client == nil {
		o.Client = defaultClient
	}
	return o
}

func defaultClient(insecure bool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the spec's insecure: true asks for it
	}
	return &http.Client{Transport: t, Timeout: time.Minute}
}

// client makes the requests to one forge's API: authorized, bounded,
// and with errors that name the URL without its query and never the
// credential.
type client struct {
	hc   *http.Client
	base *url.URL
	// header is sent with every request (Authorization, Accept).
	header http.Header
	// secret is the credential, kept out of the messages errors quote.
	secret   string
	opts     Options
	requests int
}

// newClient returns a client of the API at api (defaultAPI when empty)
// with path appended unless api's path already ends with it.
func newClient(api, defaultAPI, path string, insecure bool, opts Options) (*client, error) {
	if api == "" {
		api = defaultAPI
	}
	if api == "" {
		return nil, errors.New("api: the forge's URL is required")
	}
	base, err := url.Parse(strings.TrimSpace(api))
	if err != nil {
		return nil, fmt.Errorf("api: not a URL: %w", stripURL(err))
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("api %s: the scheme must be http or https", shown(base))
	}
	if base.Host == "" || base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("api %s: want scheme://host[/path], without credentials, query or fragment", shown(base))
	}
	if opts.Allow != nil {
		if err := opts.Allow(base.String()); err != nil {
			return nil, err
		}
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	base.RawPath = ""
	if path != "" && !strings.HasSuffix(base.Path, path) {
		base.Path += path
	}
	opts = opts.withDefaults()
	given := opts.Client(insecure)
	if given == nil {
		return nil, errors.New("no HTTP client to reach the forge with")
	}
	hc := *given
	c := &client{base: base, header: http.Header{}, opts: opts}
	callers := hc.CheckRedirect
	hc.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if err := c.checkRedirect(next, via); err != nil {
			return err
		}
		if callers != nil {
			return callers(next, via)
		}
		return nil
	}
	c.hc = &hc
	return c, nil
}

// checkRedirect follows at most maxRedirects redirects, to http or
// https, and sends the credential to the first request's host alone
// (Go keeps it for another port or a subdomain) and never over plain
// http after https.
func (c *client) checkRedirect(next *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if next.URL.Scheme != "http" && next.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s: the scheme must be http or https", shown(next.URL))
	}
	first := via[0].URL
	if next.URL.Host != first.Host || (first.Scheme == "https" && next.URL.Scheme != "https") {
		next.Header.Del("Authorization")
	}
	return nil
}

// authorize sends value as the Authorization header; secret is the part
// errors must never quote.
func (c *client) authorize(value, secret string) {
	if secret == "" {
		return
	}
	c.header.Set("Authorization", value)
	c.secret = secret
}

// token authorizes with the token ref names, if any, as "scheme token".
func (c *client) token(ctx context.Context, secrets Secrets, ref *secretRef, scheme string) error {
	token, err := ref.read(ctx, secrets, "tokenRef")
	c.authorize(scheme+" "+token, token)
	return err
}

// basic authorizes with a user name and password.
func (c *client) basic(user, password string) {
	if password == "" {
		return
	}
	r := http.Request{Header: http.Header{}}
	r.SetBasicAuth(user, password)
	c.authorize(r.Header.Get("Authorization"), password)
}

// url returns the API URL of path (escaped already, from the base's
// path on) with query q.
func (c *client) url(path string, q url.Values) *url.URL {
	u := *c.base
	u.RawPath = u.EscapedPath() + path
	u.Path, _ = url.PathUnescape(u.RawPath)
	u.RawQuery = q.Encode()
	return &u
}

// do sends a GET request to u and returns the response, whose body the
// caller closes; a status other than 2xx is an error (wrapping
// errNotFound for 404) quoting a bounded part of the forge's message.
func (c *client) do(ctx context.Context, u *url.URL) (*http.Response, error) {
	if c.requests++; c.requests > c.opts.MaxRequests {
		return nil, fmt.Errorf("more than %d requests to the forge", c.opts.MaxRequests)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", shown(u), stripURL(err))
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "graphcd")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", shown(u), stripURL(err))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 4*maxMessage))
	err = fmt.Errorf("GET %s: %s%s", shown(u), resp.Status, c.message(head))
	if resp.StatusCode == http.StatusNotFound {
		err = fmt.Errorf("%w (%w)", err, errNotFound)
	}
	return nil, err
}

// get returns the body and header of u, read within the byte budget.
func (c *client) get(ctx context.Context, u *url.URL) ([]byte, http.Header, error) {
	resp, err := c.do(ctx, u)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	budget := c.opts.MaxResponseBytes
	if resp.ContentLength > budget {
		return nil, nil, fmt.Errorf("GET %s: %d bytes, more than %d bytes", shown(u), resp.ContentLength, budget)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, budget+1))
	if err != nil {
		return nil, nil, fmt.Errorf("GET %s: %w", shown(u), err)
	}
	if int64(len(body)) > budget {
		return nil, nil, fmt.Errorf("GET %s: more than %d bytes", shown(u), budget)
	}
	return body, resp.Header, nil
}

// getJSON decodes the body of u into v.
func (c *client) getJSON(ctx context.Context, u *url.URL, v any) error {
	body, _, err := c.get(ctx, u)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: %w", shown(u), err)
	}
	return nil
}

// exists tells whether u answers 2xx (true) or 404 (false), without
// reading the body.
func (c *client) exists(ctx context.Context, u *url.URL) (bool, error) {
	resp, err := c.do(ctx, u)
	if errors.Is(err, errNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = resp.Body.Close()
	return true, nil
}

// message is ": " and the start of a forge's error body, on one line,
// without the credential.
func (c *client) message(body []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(body), "?"))
	if c.secret != "" {
		s = strings.ReplaceAll(s, c.secret, "***")
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "..."
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// nextFunc returns the URL of the page after the one read from u ("" at
// the end), from the response's header or body.
type nextFunc func(u *url.URL, h http.Header, body []byte) (string, error)

// listAll reads the pages of a listing from first on, each decoded by
// decode, at most MaxPages pages and MaxResults items. A next page must
// be on the API's scheme and host.
func listAll[T any](ctx context.Context, c *client, first *url.URL, next nextFunc, decode func([]byte) ([]T, error)) ([]T, error) {
	var out []T
	u := first
	for page := 1; ; page++ {
		body, h, err := c.get(ctx, u)
		if err != nil {
			return nil, err
		}
		items, err := decode(body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", shown(u), err)
		}
		if out = append(out, items...); len(out) > c.opts.MaxResults {
			return nil, fmt.Errorf("GET %s: more than %d items", shown(first), c.opts.MaxResults)
		}
		link, err := next(u, h, body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", shown(u), err)
		}
		if link == "" {
			return out, nil
		}
		if page >= c.opts.MaxPages {
			return nil, fmt.Errorf("GET %s: more than %d pages", shown(first), c.opts.MaxPages)
		}
		if u, err = c.sameHost(u, link); err != nil {
			return nil, err
		}
	}
}

// sameHost resolves a next-page link against u and refuses one that
// leaves the API's scheme and host: the credential goes with it.
func (c *client) sameHost(u *url.URL, link string) (*url.URL, error) {
	ref, err := url.Parse(link)
	if err != nil {
		return nil, fmt.Errorf("GET %s: next page: %w", shown(u), stripURL(err))
	}
	next := u.ResolveReference(ref)
	if next.Scheme != c.base.Scheme || next.Host != c.base.Host || next.User != nil {
		return nil, fmt.Errorf("GET %s: the next page %s is not on %s://%s", shown(u), shown(next), c.base.Scheme, c.base.Host)
	}
	return next, nil
}

// decodeList decodes a JSON array.
func decodeList[T any](body []byte) ([]T, error) {
	var out []T
	return out, json.Unmarshal(body, &out)
}

// decodeValues decodes the values of a Bitbucket page.
func decodeValues[T any](body []byte) ([]T, error) {
	var page struct {
		Values []T `json:"values"`
	}
	return page.Values, json.Unmarshal(body, &page)
}

// linkNext follows the Link header's rel="next" (GitHub, Gitea,
// GitLab).
func linkNext(_ *url.URL, h http.Header, _ []byte) (string, error) {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(part, ";")
			if !ok {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				if name, val, _ := strings.Cut(strings.TrimSpace(p), "="); name == "rel" && strings.Trim(val, `"`) == "next" {
					return strings.Trim(strings.TrimSpace(target), "<>"), nil
				}
			}
		}
	}
	return "", nil
}

// withQuery is u with query parameter k set to v.
func withQuery(u *url.URL, k, v string) string {
	q := u.Query()
	q.Set(k, v)
	next := *u
	next.RawQuery = q.Encode()
	return next.String()
}

// totalNext follows the Link header and, without one, counts pages
// against X-Total-Count (Gitea): limit items a page.
func totalNext(limit int) nextFunc {
	return func(u *url.URL, h http.Header, body []byte) (string, error) {
		if link, err := linkNext(u, h, body); link != "" || err != nil {
			return link, err
		}
		total, err := strconv.Atoi(h.Get("X-Total-Count"))
		if err != nil {
			return "", nil //nolint:nilerr // no count: one page
		}
		page, _ := strconv.Atoi(u.Query().Get("page"))
		page = max(page, 1)
		if page*limit >= total {
			return "", nil
		}
		return withQuery(u, "page", strconv.Itoa(page+1)), nil
	}
}

// shown is u as errors name it: without credentials and query.
func shown(u *url.URL) string {
	s := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return s.String()
}

// stripURL drops the URL a *url.Error carries (the caller names it
// without its query), keeping the cause.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// esc escapes one path segment ("/" included).
func esc(s string) string { return url.PathEscape(s) }

// escRef escapes a branch or file path, keeping its "/".
func escRef(s string) string {
	parts := strings.Split(strings.Trim(s, "/"), "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
