package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/auth/dex"
	"github.com/graphcd/graphcd/auth/login"
	"github.com/graphcd/graphcd/auth/oidc"
	"github.com/graphcd/graphcd/auth/session"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/kubewatch"
)

// authOptions are the flags of `graphcd server` about logging in.
type authOptions struct {
	disable    bool
	sessionTTL time.Duration
	dexStorage *command.Enum
	// trustedProxies are --trusted-proxies (or its old name
	// --login-trusted-proxies), addresses or CIDRs.
	trustedProxies []string
	// kubeconfig is the root's --kubeconfig, for Dex's Kubernetes storage.
	kubeconfig string
	// clockSkew is the hidden --clock-skew: a fault the reliability
	// battery injects (docs/reliability.md).
	clockSkew time.Duration
}

func (o *authOptions) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.disable, "disable-auth", false,
		"serve without authentication or RBAC: every request may do everything (local experiments only)")
	f.DurationVar(&o.sessionTTL, "session-duration", session.DefaultTTL, "how long a login lasts")
	f.StringSliceVar(&o.trustedProxies, "trusted-proxies", nil,
		"addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client for the login limits and the audit trail (default none: the header is ignored)")
	f.StringSliceVar(&o.trustedProxies, "login-trusted-proxies", nil, "old name of --trusted-proxies")
	_ = f.MarkDeprecated("login-trusted-proxies", "use --trusted-proxies")
	o.dexStorage = command.NewEnum("memory", "memory", "kubernetes")
	f.Var(o.dexStorage, "dex-storage",
		"where the embedded Dex keeps logins in progress: memory (one replica) or kubernetes (Dex's CRDs, shared by replicas; needs dex.clientSecret in graphcd-secret)")
	f.DurationVar(&o.clockSkew, "clock-skew", 0,
		"fault injection: move the clock this replica issues and checks session tokens by, as a replica whose clock is off would")
	_ = f.MarkHidden("clock-skew")
}

// proxies parses --trusted-proxies.
func (o *authOptions) proxies() ([]netip.Prefix, error) {
	p, err := parsePrefixes(o.trustedProxies)
	if err != nil {
		return nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	return p, nil
}

// dexClientSecretKey is the graphcd-secret key replicas sharing Dex's
// Kubernetes storage take graphcd's client secret from.
const dexClientSecretKey = "dex.clientSecret"

// authParts are what the server needs from the auth setup.
type authParts struct {
	authz    *auth.Authorizer
	sessions *auth.Sessions
	routes   []apiserver.Route
	// dex is the embedded Dex's handler, nil without one.
	dex http.Handler
}

// projectRetry is how often the RBAC setup tries again to watch
// AppProjects while their CRD is not served yet.
const projectRetry = 2 * time.Second

// setUpAuth starts what authentication and RBAC need in namespace: the
// policy and project-role watches, the session keys and revocation list,
// the local accounts (with the initial admin password), and single sign-on
// when graphcd-cm configures it; proxies are --trusted-proxies, parsed. It
// returns nil with --disable-auth.
func (o *authOptions) setUp(ctx context.Context, watch *kubewatch.Source, objects *catalog.Catalog, sh *shared, proxies []netip.Prefix, log *slog.Logger) (*authParts, error) {
	if o.disable {
		log.Warn("authentication is disabled (--disable-auth): every request may do everything")
		return nil, nil
	}
	if o.sessionTTL <= 0 {
		return nil, fmt.Errorf("--session-duration must be positive, got %s", o.sessionTTL)
	}
	kc, namespace := watch.Client(), watch.Namespace()
	authz := auth.NewAuthorizer()
	if err := auth.WatchPolicy(ctx, watch, authz, log); err != nil {
		return nil, fmt.Errorf("watch the RBAC policy: %w", err)
	}
	go func() {
		for ctx.Err() == nil {
			err := auth.WatchProjects(ctx, objects, authz, log)
			if err == nil {
				return
			}
			log.Debug("watch project roles; retrying", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(projectRetry):
			}
		}
	}()

	keys := session.NewSecretKeys(watch)
	go retry(ctx, log, "cannot read or create the session signing key", func() error { return keys.Start(ctx) })
	var revocations session.Revocations = session.NewMemoryRevocations()
	if sh.redis != nil {
		rr := session.NewRedisRevocations(sh.redis, "")
		go func() {
			if err := rr.Run(ctx); err != nil && ctx.Err() == nil {
				log.Error("shared revocation list stopped", "err", err)
			}
		}()
		revocations = rr
	}
	sopts := session.Options{TTL: o.sessionTTL, Revocations: revocations}
	if skew := o.clockSkew; skew != 0 {
		log.Warn("session tokens are issued and checked on a skewed clock (--clock-skew, a fault injection)", "skew", skew)
		sopts.Now = func() time.Time { return time.Now().Add(skew) }
	}
	issuer := session.NewIssuer(keys, sopts)

	accts := accounts.NewStore(watch)
	if err := accts.Start(ctx); err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	go retry(ctx, log, "cannot set the admin account's initial password", func() error {
		_, created, err := accounts.EnsureAdminPassword(ctx, kc, namespace)
		if created {
			log.Info("the admin account's initial password is in a Secret",
				"secret", namespace+"/"+accounts.InitialAdminSecretName, "key", "password")
		}
		return err
	})
	sessions := &auth.Sessions{
		Issuer: issuer, Accounts: accts, Projects: objects, TTL: o.sessionTTL,
		Limiter: login.NewLimiter(login.Options{Known: func(name string) bool {
			_, ok := accts.Get(name)
			return ok
		}}),
	}
	sso, dexServer, baseURL, err := o.setUpSSO(ctx, kc, namespace, log)
	if err != nil {
		return nil, err
	}
	h := &auth.Handlers{Sessions: sessions, SSO: sso, Authz: authz, Secure: strings.HasPrefix(baseURL, "https://"), TrustedProxies: proxies, Log: log}
	routes := []apiserver.Route{
		{Pattern: "/auth/login", Name: "auth_login", Handler: h.Login()},
		{Pattern: "/auth/callback", Name: "auth_callback", Handler: h.Callback()},
		{Pattern: "/auth/logout", Name: "auth_logout", Handler: h.Logout()},
		{Pattern: "/auth/exchange", Name: "auth_exchange", Handler: h.Exchange()},
	}
	parts := &authParts{authz: authz, sessions: sessions, routes: routes}
	if dexServer != nil {
		parts.dex = dexServer.Handler()
		parts.routes = append(parts.routes, apiserver.Route{Pattern: "/api/dex/", Name: "dex", Handler: parts.dex})
		context.AfterFunc(ctx, func() { _ = dexServer.Close() })
	}
	return parts, nil
}

// setUpRetry is how often the server tries again to set up a part of
// authentication that failed (while its namespace does not exist, say).
const setUpRetry = 5 * time.Second

// retry calls f until it succeeds or ctx ends, logging each failure with
// what: requests that need the part fail clearly meanwhile.
func retry(ctx context.Context, log *slog.Logger, what string, f func() error) {
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return
		}
		log.Error(what+"; retrying", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(setUpRetry):
		}
	}
}

// setUpSSO reads graphcd-cm and starts single sign-on: the embedded Dex
// with dex.config, or a direct OIDC provider with oidc.config. Both need
// url, graphcd's external URL. Without them it returns nil and SSO is
// off. Changes to them take effect at the next start.
func (o *authOptions) setUpSSO(ctx context.Context, kc kubernetes.Interface, namespace string, log *slog.Logger) (*oidc.Provider, *dex.Server, string, error) {
	cm, err := kc.CoreV1().ConfigMaps(namespace).Get(ctx, auth.SettingsConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, "", nil
	}
	if err != nil {
		return nil, nil, "", fmt.Errorf("read %s: %w", auth.SettingsConfigMap, err)
	}
	base := strings.TrimRight(strings.TrimSpace(cm.Data["url"]), "/")
	dexConfig, oidcConfig := strings.TrimSpace(cm.Data["dex.config"]), strings.TrimSpace(cm.Data["oidc.config"])
	if dexConfig == "" && oidcConfig == "" {
		return nil, nil, base, nil
	}
	if base == "" {
		log.Warn("single sign-on is off: graphcd-cm configures it but has no url")
		return nil, nil, base, nil
	}
	if dexConfig != "" && oidcConfig != "" {
		return nil, nil, "", fmt.Errorf("%s: set dex.config or oidc.config, not both", auth.SettingsConfigMap)
	}
	lookup := secretLookup(ctx, kc, namespace)
	callback := base + "/auth/callback"
	if oidcConfig != "" {
		c, err := oidc.ParseConfig(oidcConfig, lookup)
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s oidc.config: %w", auth.SettingsConfigMap, err)
		}
		o, err := c.Options()
		if err != nil {
			return nil, nil, "", fmt.Errorf("%s oidc.config: %w", auth.SettingsConfigMap, err)
		}
		o.RedirectURL, o.BaseURL, o.Logger = callback, base, log
		p, err := oidc.NewProvider(ctx, o)
		if err != nil {
			return nil, nil, "", err
		}
		log.Info("single sign-on through an OIDC provider", "name", c.Name, "issuer", c.Issuer)
		return p, nil, base, nil
	}
	cfg, err := dex.ParseConfig(dexConfig, lookup)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s dex.config: %w", auth.SettingsConfigMap, err)
	}
	issuer := base + "/api/dex"
	dopts := dex.Options{Issuer: issuer, Client: dex.ClientRegistration{RedirectURIs: []string{callback}}, Logger: log}
	var cookieKey []byte
	if o.dexStorage.String() == "kubernetes" {
		// Replicas share the logins in progress, so they must share the
		// client secret and the key sealing the login cookie too.
		secret, err := lookup(session.SecretName, dexClientSecretKey)
		if err != nil || len(secret) < 16 {
			return nil, nil, "", fmt.Errorf("--dex-storage kubernetes needs %s in Secret %s (16 characters or more)", dexClientSecretKey, session.SecretName)
		}
		dopts.Client.Secret = secret
		sum := sha256.Sum256([]byte("graphcd login cookie\x00" + secret))
		cookieKey = sum[:]
		kubeconfig := o.kubeconfig
		if kubeconfig == "" {
			kubeconfig, _, _ = strings.Cut(os.Getenv("KUBECONFIG"), string(os.PathListSeparator))
		}
		dopts.Storage.Kubernetes = &dex.KubernetesStorage{InCluster: kubeconfig == "", KubeconfigFile: kubeconfig}
	}
	d, err := dex.New(ctx, cfg, dopts)
	if err != nil {
		return nil, nil, "", fmt.Errorf("start Dex: %w", err)
	}
	client := d.Client()
	p, err := oidc.NewProvider(ctx, oidc.Options{
		Issuer: issuer, ClientID: client.ID, ClientSecret: client.Secret, RedirectURL: callback, BaseURL: base, Logger: log,
		CookieKey: cookieKey,
	})
	if err != nil {
		_ = d.Close()
		return nil, nil, "", err
	}
	log.Info("single sign-on through the embedded Dex", "issuer", issuer)
	return p, d, base, nil
}

// secretLookup reads key of Secret name in namespace; errors name the
// Secret and key, never the value.
func secretLookup(ctx context.Context, kc kubernetes.Interface, namespace string) func(name, key string) (string, error) {
	return func(name, key string) (string, error) {
		s, err := kc.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("secret %s/%s: %w", namespace, name, err)
		}
		v, ok := s.Data[key]
		if !ok {
			return "", fmt.Errorf("secret %s/%s has no key %q", namespace, name, key)
		}
		return string(v), nil
	}
}

// parsePrefixes parses addresses (as one-address prefixes) and CIDRs.
func parsePrefixes(in []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range in {
		v = strings.TrimSpace(v)
		if a, err := netip.ParseAddr(v); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(v)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR", v)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
