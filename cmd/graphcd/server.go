package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/apiserver"
	"github.com/graphcd/graphcd/apiserver/actioncfg"
	"github.com/graphcd/graphcd/apiserver/appops"
	"github.com/graphcd/graphcd/apiserver/badge"
	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/apiserver/notifycfg"
	"github.com/graphcd/graphcd/apiserver/secretops"
	"github.com/graphcd/graphcd/apiserver/statusview"
	"github.com/graphcd/graphcd/apiserver/terminal"
	"github.com/graphcd/graphcd/apiserver/webhook"
	"github.com/graphcd/graphcd/auth"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/insights"
	"github.com/graphcd/graphcd/internal/kubewatch"
	"github.com/graphcd/graphcd/internal/memguard"
	"github.com/graphcd/graphcd/internal/pushrelay"
	"github.com/graphcd/graphcd/internal/redismetrics"
	"github.com/graphcd/graphcd/internal/statusboard"
	"github.com/graphcd/graphcd/internal/version"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/inproc"
	"github.com/graphcd/graphcd/reposerver/repocreds"
	"github.com/graphcd/graphcd/resolvers"
)

// serverOptions are the flags of `graphcd server`.
type serverOptions struct {
	listen          string
	tls             serverTLSOptions
	installCRDs     bool
	shutdownTimeout time.Duration
	kube            kubeconn.Limits
	repoServer      repoServerClientOptions
	render          renderworker.Options
	shared          sharedOptions
	app             appControllerOptions
	controller      bool
	auth            authOptions
	audit           auditOptions
	tracing         tracingOptions
	profile         profileListener
}

func newServerCmd(root *rootOptions) *cobra.Command {
	o := &serverOptions{}
	c := &cobra.Command{
		Use:   "server",
		Short: "Run the graphcd API server, console and metrics on one HTTPS listener",
		Long: `Run the graphcd API server, console and metrics on one listener, and
(unless --controller=false) the application controller.

It serves HTTPS, with HTTP/2 for clients that offer it. The certificate is
the one in --tls-cert/--tls-key (read again when the files change); else
the kubernetes.io/tls Secret graphcd-server-tls in --namespace, when it
exists; else a self-signed certificate generated at the first start and
kept in graphcd-secret (keys tls.crt, tls.key). A certificate rotated in
either Secret is served from the next connection, without a restart.
--insecure serves plain HTTP instead, for a server behind a proxy or
ingress that terminates TLS, or for local use.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServer(c.Context(), c, root, o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.listen, "listen", apiserver.DefaultListen, "address to serve HTTPS (or, with --insecure, HTTP) on")
	o.tls.addFlags(f)
	f.BoolVar(&o.installCRDs, "install-crds", false, "create or upgrade the graphcd CRDs at start")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", apiserver.DefaultShutdownTimeout,
		"how long to wait for running requests on SIGINT/SIGTERM")
	o.kube.AddFlags(f)
	o.repoServer.addFlags(f)
	o.render.AddFlags(f)
	o.shared.addFlags(f)
	// One process is the default install: no Lease unless asked for.
	o.app.addFlags(f, false)
	f.BoolVar(&o.controller, "controller", true, "run the application controller in this process")
	o.auth.addFlags(f)
	o.audit.addFlags(f)
	o.tracing.addFlags(f)
	o.profile.addFlags(c)
	return c
}

// installCRDsTimeout bounds --install-crds, including the wait for the API
// server to serve the CRDs.
const installCRDsTimeout = time.Minute

func runServer(ctx context.Context, c *cobra.Command, root *rootOptions, o *serverOptions) error {
	if err := checkListen(ctx, o.listen); err != nil {
		return fmt.Errorf("%s: %w", command.FlagOrigin(c, "listen"), err)
	}
	if err := o.tls.validate(c); err != nil {
		return err
	}
	if o.shutdownTimeout <= 0 {
		return fmt.Errorf("%s: must be positive, got %s", command.FlagOrigin(c, "shutdown-timeout"), o.shutdownTimeout)
	}
	if err := o.app.validate(c); err != nil {
		return err
	}
	log := root.log
	flushTraces, err := o.tracing.start(ctx, c, "graphcd-server", log)
	if err != nil {
		return err
	}
	defer flushTraces()
	if err := o.profile.serve(ctx, c, log); err != nil {
		return err
	}
	k, err := kubeconn.Connect(ctx, kubeconn.Options{
		Kubeconfig: root.kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig"), Limits: o.kube,
	})
	if err != nil {
		return err
	}
	traceKubernetes(k.Config)
	build := version.Get()
	log.Info("graphcd starting", "version", build.Version, "commit", build.Commit)
	log.Info("connected to Kubernetes API", "host", k.Host, "version", k.ServerVersion)

	if o.installCRDs {
		installCtx, cancel := context.WithTimeout(ctx, installCRDsTimeout)
		err := crd.Install(installCtx, k.APIExt)
		cancel()
		if err != nil {
			return fmt.Errorf("install CRDs: %w", err)
		}
		log.Info("CRDs installed")
	}

	repoServer, err := o.repoServer.dial(c)
	if err != nil {
		return err
	}
	if repoServer != nil {
		defer func() { _ = repoServer.Close() }()
		log.Info("rendering with a separate repo-server", "addr", o.repoServer.addr)
	}

	// The API tests repositories with it; the controller renders with it.
	var svc reposerver.Service = repoServer
	metrics := apiserver.NewRegistry()
	memory := memoryGuard(ctx, log)
	metrics.MustRegister(memguard.Collectors()...)
	metrics.MustRegister(redismetrics.Collectors()...)
	metrics.MustRegister(auth.Collectors()...)
	if repoServer == nil {
		metrics.MustRegister(inproc.Collectors()...)
		worker, err := o.render.Worker(c)
		if err != nil {
			return err
		}
		local, cleanup, err := localRepoServer(ctx, log, worker)
		if err != nil {
			return err
		}
		defer cleanup()
		svc = local
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects, objectsReady, err := catalog.Start(ctx, k.Config, o.app.namespace, o.app.served)
	if err != nil {
		return err
	}
	writer, err := newAppWriter(k)
	if err != nil {
		return err
	}
	sh, err := o.shared.connect(ctx, c, log, redismetrics.Server)
	if err != nil {
		return err
	}
	kc, err := kubernetes.NewForConfig(k.Config)
	if err != nil {
		return err
	}
	// One registry of destination clusters, read by the API and the
	// controller alike.
	registry, err := clusters.New(clusters.Options{Client: kc, Namespace: o.app.namespace, InCluster: k.Config, Logger: log})
	if err != nil {
		return err
	}
	clusterList, err := catalog.StartClusters(ctx, registry, log)
	if err != nil {
		return err
	}
	// One watch per settings object (graphcd-cm, graphcd-rbac-cm,
	// graphcd-secret), shared by every part of the process that reads it.
	watch := kubewatch.NewSource(ctx, kc, o.app.namespace)
	tlsConfig, err := o.tls.config(ctx, watch, o.listen, log)
	if err != nil {
		return err
	}
	// --trusted-proxies, parsed once: the login limits and the audit
	// trail name the client by the same rule.
	proxies, err := o.auth.proxies()
	if err != nil {
		return err
	}
	o.auth.kubeconfig = root.kubeconfig
	authParts, err := o.auth.setUp(ctx, watch, objects, sh, proxies, log)
	if err != nil {
		return err
	}
	settings := catalog.NewSettings(watch)
	actionSource := &actioncfg.Source{Logger: log}
	settings.Logger, settings.Followers = log, []func(map[string]string){actionSource.Update}
	if err := settings.Start(ctx); err != nil {
		return fmt.Errorf("watch %s: %w", wellknown.SettingsConfigMap, err)
	}
	// The notifications configuration, as the controller follows it:
	// testNotification renders and sends with it, and the API lists
	// subscriptions with its default triggers.
	notify := notifycfg.New(log)
	if err := notify.Start(ctx, watch); err != nil {
		return fmt.Errorf("notifications configuration: %w", err)
	}
	auditLog, auditStore, err := o.audit.setUp(ctx, kc, o.app.namespace, sh, log)
	if err != nil {
		return err
	}
	creds := repocreds.New(kc, o.app.namespace)
	kubeEvents := catalog.NewEvents(kc)
	// Delivery insights: the controllers' logs, indexed by day.
	insightsIndex := insights.NewIndex()
	go retry(ctx, log, "cannot watch the delivery insights logs", func() error {
		return insights.Follow(ctx, kc, o.app.namespace, insightsIndex, log)
	})
	opts := apiserver.Options{
		Listen: o.listen, Registry: metrics, ArgoCDNames: o.app.argoCDNames,
		Ready:  readyWhenSynced(readyWithRepoServer(apiserver.KubeReadiness(k.APIExt), repoServer), "applications, applicationsets and projects", objectsReady),
		Logger: log, ShutdownTimeout: o.shutdownTimeout, TLS: tlsConfig,
		TrustedProxies: proxies, Audit: auditLog,
		API: resolvers.Config{
			Build: build, Namespace: o.app.namespace, AppNamespaces: o.app.served,
			Apps: objects.Apps, Projects: objects, Clusters: clusterList, Repositories: catalog.NewRepositories(kc, o.app.namespace),
			Writer: writer, Events: sh.events, States: sh.states, KubeEvents: kubeEvents, AppEvents: kubeEvents,
			AppSets: objects, AppSetWriter: writer, AppSetSources: &resolvers.GeneratorSources{Client: writer.Client, Forges: o.app.forges()}, Links: settings, Actions: actionSource, Notifications: notify,
			ProjectWriter: writer, Secrets: secretops.Service{Client: kc, Namespace: o.app.namespace}, RepoTester: svc,
			Logs: catalog.NewPodLogs(clusterList), Settings: settings,
			Resources: catalog.NewResources(clusterList), Repo: svc, RepoCreds: creds, Audit: auditStore,
			Insights: insightsIndex,
			// The controller renders with a Renderer of its own: the same rules.
			Manifests: &manifests.Renderer{Repo: svc, Credentials: creds.Lookup, Keys: writer.Client, Tools: settings.ToolOptions},
		},
	}
	view := &statusview.View{Board: sh.status, ID: statusboard.NewID(), Version: build.Version, RepoServer: "in process", Memory: memory, Logger: log}
	if sh.redis != nil { // a nil *redis.Client is not a nil UniversalClient
		view.Redis = sh.redis
	}
	if repoServer != nil {
		view.RepoServer, view.CheckRepoServer = o.repoServer.addr, repoServer.Check
	}
	if authParts != nil && authParts.dex != nil {
		view.Dex = authParts.dex
	}
	go view.Run(ctx)
	opts.API.Status = view
	if authParts != nil {
		opts.API.Authz, opts.API.AccountService = authParts.authz, authParts.sessions
		opts.Authenticator, opts.Routes = authParts.sessions, authParts.routes
	}
	// Providers cannot log in: the webhook authenticates with their secrets.
	hookSecrets := webhook.NewSecretWatch(watch)
	go retry(ctx, log, "cannot watch the webhook secrets", func() error { return hookSecrets.Start(ctx) })
	opts.Webhook = &webhook.Options{Apps: objects.Apps, AppsLoaded: objectsReady, Refresher: writer, Secrets: hookSecrets, Limits: settings, Logger: log,
		Sets: appset.PushRefresher{Client: writer.Client, Namespace: o.app.namespace}}
	opts.Badge = &badge.Options{Apps: objects.Apps, Namespace: o.app.namespace, Enabled: settings.StatusBadgeEnabled}
	// The web terminal serves only while graphcd-cm's exec.enabled is "true".
	opts.Terminal = &terminal.Options{Exec: catalog.NewPodExec(clusterList), Settings: settings, Events: auditLog.Events}
	pushed := &pushQueue{}
	started := pushed.ctl.Store
	if sh.redis != nil {
		// API replicas hand pushes to the controllers' leaders through
		// Redis; an embedded controller receives them too.
		relay, err := pushrelay.New(sh.redis, sh.secret, log)
		if err != nil {
			return err
		}
		opts.Webhook.Queue = relay
		if started, err = servePushes(ctx, sh, log, pushed.ctl.Store); err != nil {
			return err
		}
	}
	if o.controller {
		opts.Webhook.Queue = pushed
		// The controller's application metrics join the server's.
		metrics.MustRegister(controller.MetricsCollectors()...)
		metrics.MustRegister(controller.DeliveryCollectors()...)
	}
	srv, err := apiserver.New(opts)
	if err != nil {
		return err
	}
	if err := srv.Listen(ctx); err != nil {
		return err
	}
	if !o.controller {
		return srv.Run(ctx) // logs the address it serves on
	}
	ctlDone := make(chan error, 1)
	go func() {
		cfg := o.app.config()
		cfg.Repo, cfg.Logger, cfg.State, cfg.Watch, cfg.Clusters, cfg.Status = svc, log, sh.states, watch, registry, sh.status
		cfg.Memory = memory
		err := runController(ctx, k, cfg, sh.events, started)
		if err != nil {
			cancel() // a server without its controller is not serving its purpose
		}
		ctlDone <- err
	}()
	err = srv.Run(ctx)
	cancel()
	if cerr := <-ctlDone; cerr != nil && err == nil {
		err = fmt.Errorf("application controller: %w", cerr)
	}
	return err
}

// checkListen validates a listen address before anything else starts, so a
// typo fails at once rather than after connecting to Kubernetes.
func checkListen(ctx context.Context, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if ae, ok := errors.AsType[*net.AddrError](err); ok {
			err = errors.New(ae.Err)
		}
		return fmt.Errorf("invalid listen address %q: %w", addr, err)
	}
	if _, err := net.DefaultResolver.LookupPort(ctx, "tcp", port); err != nil {
		return fmt.Errorf("invalid listen address %q: bad port %q", addr, port)
	}
	return nil
}

// readyWhenSynced adds to ready the condition that synced is closed: the
// API answers from an in-memory index that must hold every object first.
// ready's own reason (say, CRDs not installed) comes first.
func readyWhenSynced(ready apiserver.ReadyFunc, what string, synced <-chan struct{}) apiserver.ReadyFunc {
	return func(ctx context.Context) error {
		if err := ready(ctx); err != nil {
			return err
		}
		select {
		case <-synced:
			return nil
		default:
			return fmt.Errorf("still loading %s", what)
		}
	}
}

// newAppWriter returns the service the API changes Applications through.
// Its client reads past any cache and knows the core kinds too: the render
// path reads the GPG keys ConfigMap with it.
func newAppWriter(k *kubeconn.Conn) (appops.Service, error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return appops.Service{}, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return appops.Service{}, err
	}
	c, err := client.New(k.Config, client.Options{Scheme: scheme})
	if err != nil {
		return appops.Service{}, fmt.Errorf("application client: %w", err)
	}
	return appops.Service{Client: c}, nil
}
