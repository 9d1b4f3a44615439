package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// Sync impersonation (application.sync.impersonation.enabled): every
// write of a sync — apply, prune, hooks, dry runs — and the dry runs of
// server-side diff go to the destination as the service account the
// app's project names for the destination, so the API server's RBAC, not
// only the project, bounds what an app can do. Reads of the live state
// (the cluster cache) keep graphcd's own credentials, as in Argo CD.

// MessageNoServiceAccount starts the message of a sync that impersonation
// cannot run because the project names no service account for the
// destination, as Argo CD words it.
const MessageNoServiceAccount = "failed to find a matching service account to impersonate"

// maxImpersonated bounds the impersonating clients a cluster keeps; past
// it they are dropped and built again on use. Projects name a handful of
// accounts, but one given without a namespace is one account per
// destination namespace.
const maxImpersonated = 4096

// syncClients are one cluster's clients for syncs: graphcd's own and one
// per impersonated user, built on first use and kept for as long as the
// cluster's Secret stays the same. They share one rate limiter (the
// cluster's QPS and burst hold for all of graphcd's syncs together) and
// one HTTP transport, so one connection pool: an impersonating client
// only adds the Impersonate-User header.
type syncClients struct {
	cfg  *rest.Config
	http *http.Client // graphcd's own: its transport carries every client's requests
	own  dynamic.Interface

	mu gosync.Mutex
	as map[string]dynamic.Interface
}

func newSyncClients(cfg *rest.Config) (*syncClients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS >= 0 {
		qps, burst := cfg.QPS, cfg.Burst
		if qps == 0 {
			qps = rest.DefaultQPS
		}
		if burst <= 0 {
			burst = rest.DefaultBurst
		}
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(qps, burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	own, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &syncClients{cfg: cfg, http: hc, own: own, as: map[string]dynamic.Interface{}}, nil
}

// clientAs returns the client that acts as user; "" is graphcd itself.
func (s *syncClients) clientAs(user string) (dynamic.Interface, error) {
	if user == "" {
		return s.own, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.as[user]; ok {
		return c, nil
	}
	base := s.http.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc := &http.Client{
		Transport: transport.NewImpersonatingRoundTripper(transport.ImpersonationConfig{UserName: user}, base),
		Timeout:   s.http.Timeout,
	}
	c, err := dynamic.NewForConfigAndClient(s.cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("client impersonating %s: %w", user, err)
	}
	if len(s.as) >= maxImpersonated {
		clear(s.as)
	}
	s.as[user] = c
	impersonatingClients.Inc()
	return c, nil
}

// ClientAs returns the client syncs use to act as user on the cluster;
// "" is graphcd's own Client.
func (d *Destination) ClientAs(user string) (dynamic.Interface, error) {
	switch {
	case user == "":
		return d.Client, nil
	case d.clients == nil:
		return nil, errors.New("sync impersonation is not available: the controller has no credentials of its own for the destination cluster to impersonate with")
	}
	return d.clients.clientAs(user)
}

// syncAccount returns the user an app's syncs and server-side diff act as
// on cluster c: "" (graphcd's own credentials) when impersonation is off
// in s, and otherwise the service account rules (the app's project)
// names for the destination; no account is an error whose message says
// so as Argo CD does.
func syncAccount(s *settings.Settings, rules *project.Rules, app *v1alpha1.Application, c *clusters.Cluster) (string, error) {
	if !s.SyncImpersonation {
		return "", nil
	}
	sa, err := rules.ServiceAccountFor(c.Server, app.Spec.Destination.Namespace, app.Namespace)
	if err != nil {
		return "", fmt.Errorf("%s: %w", MessageNoServiceAccount, err)
	}
	return sa.UserName(), nil
}

// impersonationIgnored is the warning of an app whose project names
// destination service accounts while impersonation is off: the field is
// ignored, and people should know rather than believe their syncs are
// bounded by those accounts. "" when there is nothing to say.
func impersonationIgnored(s *settings.Settings, rules *project.Rules) string {
	if s.SyncImpersonation || !rules.HasServiceAccounts() {
		return ""
	}
	return fmt.Sprintf("spec.destinationServiceAccounts of project '%s' is ignored: sync impersonation is disabled (set %s to \"true\" in %s); syncs run with graphcd's own credentials",
		rules.Name(), settings.KeySyncImpersonation, wellknown.SettingsConfigMap)
}

// dryRunner predicts what a server-side apply would store: a cluster
// cache does so with graphcd's credentials, an impersonatedDryRun as the
// app's service account.
type dryRunner interface {
	DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error)
}

// impersonatedDryRun sends server-side diff's dry runs as an impersonated
// service account; its client is looked up on the first dry run, so apps
// without server-side diff never ask for one.
type impersonatedDryRun struct {
	user string
	dest *Destination
}

// DryRunApply implements dryRunner.
func (d impersonatedDryRun) DryRunApply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	client, err := d.dest.ClientAs(d.user)
	if err != nil {
		return nil, err
	}
	out, err := d.dest.Live.DryRunApplyAs(ctx, client, obj, fieldManager)
	if err != nil {
		return nil, fmt.Errorf("%w (as %s)", err, d.user)
	}
	return out, nil
}

// failedDryRun is the dryRunner of an app whose server-side diff cannot
// run as it must (impersonation is on and no account matches): every dry
// run fails with why, and an app that needs none is not troubled.
type failedDryRun struct{ err error }

// DryRunApply implements dryRunner.
func (f failedDryRun) DryRunApply(context.Context, *unstructured.Unstructured, string) (*unstructured.Unstructured, error) {
	return nil, f.err
}

// dryRunnerFor is the dryRunner of server-side diff for an app whose
// syncs act as user (see syncAccount) on destination d, or fail with
// accountErr.
func dryRunnerFor(d *Destination, user string, accountErr error) dryRunner {
	switch {
	case accountErr != nil:
		return failedDryRun{accountErr}
	case user == "":
		return d.Live
	}
	return impersonatedDryRun{user: user, dest: d}
}
