// Package egress makes the requests an application's spec points graphcd
// at: a Helm value file at a URL, a file a kustomization downloads. The
// spec is a tenant's, so each request is a hostile one until checked:
//
//   - only the schemes the caller allows (helm.valuesFileSchemes), and only
//     http and https are ever fetched;
//   - no credentials of graphcd's: no repository Secret, no cookie, no
//     Authorization header (the URL's own user:password is the user's);
//   - never an address a tenant has no business reaching through graphcd:
//     link-local ones (cloud metadata services at 169.254.169.254 and
//     fd00:ec2::254), unspecified, multicast and broadcast ones; checked
//     on the address actually dialled, after DNS, and on every redirect;
//   - at most MaxRedirects redirects, each to an allowed scheme;
//   - at most the caller's byte budget, counted while reading.
//
// Loopback and private addresses stay reachable, as in Argo CD: chart
// repositories and Git servers live there. An operator who wants none of
// this sets helm.valuesFileSchemes to a scheme graphcd never fetches.
package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ErrForbiddenAddress is wrapped when a request would reach an address
// that specs may not point graphcd at.
var ErrForbiddenAddress = errors.New("address not allowed")

// ErrSchemeNotAllowed is wrapped when a URL's scheme is not one the caller
// allows.
var ErrSchemeNotAllowed = errors.New("URL scheme not allowed")

// ErrTooLarge is wrapped when a response is larger than the budget.
var ErrTooLarge = errors.New("response too large")

// MaxRedirects bounds the redirects one fetch follows.
const MaxRedirects = 5

// metadataV6 is the IPv6 address of AWS's instance metadata service,
// which is not link-local.
var metadataV6 = netip.MustParseAddr("fd00:ec2::254")

// CheckIP returns an error wrapping ErrForbiddenAddress when ip is an
// address specs may not make graphcd reach.
func CheckIP(ip netip.Addr) error {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return fmt.Errorf("%w: invalid address", ErrForbiddenAddress)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%s is link-local (a cloud metadata service lives there): %w", ip, ErrForbiddenAddress)
	case ip.IsUnspecified(), ip.IsMulticast(), ip.IsInterfaceLocalMulticast(), ip == metadataV6,
		ip.Is4() && ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Errorf("%s: %w", ip, ErrForbiddenAddress)
	}
	return nil
}

// CheckHost checks a URL's host when it is a literal address (a name is
// checked when it is dialled). Requests through a proxy are checked here
// only, since graphcd dials the proxy, not the host.
func CheckHost(host string) error {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if i := strings.LastIndexByte(host, '%'); i >= 0 { // zone
		host = host[:i]
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return nil //nolint:nilerr // a name, checked when dialled
	}
	return CheckIP(ip)
}

// CheckResolved checks host as CheckHost does and, when it is a name,
// every address it resolves to now: for a client that dials without
// Client (a Git transport), which a name resolving to another address
// later could still mislead.
func CheckResolved(ctx context.Context, host string) error {
	if err := CheckHost(host); err != nil {
		return err
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if _, err := netip.ParseAddr(h); err == nil || h == "" {
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return nil //nolint:nilerr // the fetch reports the name that does not resolve
	}
	for _, a := range addrs {
		if err := CheckIP(a); err != nil {
			return fmt.Errorf("%s resolves to %w", h, err)
		}
	}
	return nil
}

// CheckURL checks u before it is fetched: its scheme is one of schemes
// (case-insensitive) and one graphcd fetches, and its host is allowed.
func CheckURL(u *url.URL, schemes []string) error {
	scheme := strings.ToLower(u.Scheme)
	if !slices.ContainsFunc(schemes, func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), scheme) }) {
		return fmt.Errorf("%w: %q (allowed: %s)", ErrSchemeNotAllowed, u.Scheme, strings.Join(schemes, ", "))
	}
	if scheme != "http" && scheme != "https" {
		return fmt.Errorf("%w: graphcd fetches http and https URLs only, not %q", ErrSchemeNotAllowed, u.Scheme)
	}
	if u.Host == "" {
		return errors.New("the URL has no host")
	}
	return CheckHost(u.Hostname())
}

// Options configure a Client.
type Options struct {
	// RootCAs are the certificate authorities HTTPS servers are checked
	// against; nil means the system's.
	RootCAs *x509.CertPool
	// Timeout bounds one fetch, redirects and body included; 0 means one
	// minute. The caller's context may end it sooner.
	Timeout time.Duration
	// InsecureSkipVerify accepts any certificate, for a spec that asks
	// for it (an ApplicationSet generator's insecure: true).
	InsecureSkipVerify bool
}

// Client fetches URLs under the package's rules. It is safe for
// concurrent use.
type Client struct {
	transport *http.Transport
	timeout   time.Duration
}

// New returns a Client.
func New(opts Options) *Client {
	dialer := &net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   dialControl,
	}
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12, InsecureSkipVerify: opts.InsecureSkipVerify}, //nolint:gosec // G402: only where a spec asks
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &Client{transport: t, timeout: timeout}
}

// dialControl refuses a connection to a forbidden address, the one DNS
// gave: a name that resolves to a metadata address is refused as the
// address itself is.
func dialControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	return CheckIP(ip)
}

// Get fetches rawURL and returns its body, of at most maxSize bytes.
// schemes are the allowed schemes, checked on rawURL and every redirect.
// Errors name the URL without its password.
func (c *Client) Get(ctx context.Context, rawURL string, schemes []string, maxSize int64) ([]byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("invalid URL: %w", stripURL(err))
	}
	shown := u.Redacted()
	if err := CheckURL(u, schemes); err != nil {
		return nil, fmt.Errorf("%s: %w", shown, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, stripURL(err))
	}
	resp, err := c.client(schemes).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, stripURL(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", shown, resp.Status)
	}
	data, err := ReadBody(resp, maxSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, stripURL(err))
	}
	return data, nil
}

// HTTPClient is an http.Client under the package's rules, for callers
// that send their own requests (an ApplicationSet generator asking a
// forge's API or a plugin): the address dialled is checked, at most
// MaxRedirects redirects are followed, each to http or https, and Go
// drops the Authorization header on a redirect off the first host's
// domain. Requests end after the Client's timeout unless their context
// ends them sooner. Read bodies with ReadBody.
func (c *Client) HTTPClient() *http.Client {
	hc := c.client([]string{"http", "https"})
	hc.Timeout = c.timeout
	return hc
}

func (c *Client) client(schemes []string) *http.Client {
	return &http.Client{
		Transport: c.transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return fmt.Errorf("more than %d redirects", MaxRedirects)
			}
			if err := CheckURL(next.URL, schemes); err != nil {
				return fmt.Errorf("redirect to %s: %w", next.URL.Redacted(), err)
			}
			return nil // Go sends the first URL's user:password to it alone
		},
	}
}

// ReadBody reads resp's body, failing with ErrTooLarge past maxSize
// bytes, counted while reading.
func ReadBody(resp *http.Response, maxSize int64) ([]byte, error) {
	if resp.ContentLength > maxSize {
		return nil, fmt.Errorf("%d bytes, more than %d: %w", resp.ContentLength, maxSize, ErrTooLarge)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("more than %d bytes: %w", maxSize, ErrTooLarge)
	}
	return data, nil
}

// stripURL drops the URL a *url.Error carries (the caller names the URL
// itself, redacted), keeping the cause.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
