package localcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Mode selects which components a cluster runs.
type Mode int

const (
	// Minimal runs etcd and kube-apiserver: enough for CRDs, typed clients and
	// anything that only stores objects. Starts in ~3 s.
	Minimal Mode = iota
	// Full adds kube-controller-manager, kube-scheduler and KWOK with fake
	// nodes, so workloads roll out and Pods become Running and Ready.
	Full
)

func (m Mode) String() string {
	if m == Full {
		return "full"
	}
	return "minimal"
}

// Options configure Start.
type Options struct {
	Mode Mode
	// Nodes is the number of KWOK fake nodes in Full mode (default 1).
	Nodes int
	// Logger receives progress lines; nil discards them.
	Logger *slog.Logger
}

// Cluster is a running local control plane.
type Cluster struct {
	// Dir holds the PKI, kubeconfig, etcd data and component logs. Removed by
	// Stop.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig (system:masters).
	Kubeconfig string
	// Config is the admin REST config.
	Config *rest.Config
	// Client is an admin clientset.
	Client kubernetes.Interface
	// Binaries are the paths of the control-plane executables. Those the
	// cluster runs exist; call EnsureBinaries for kubectl.
	Binaries Binaries

	log     *slog.Logger
	pki     pki
	procs   []*Process
	etcdURL string
	apiPort int
}

// Start brings up a cluster and returns once it serves requests (and, in Full
// mode, once every fake node is Ready). On error everything started is
// stopped again.
func Start(ctx context.Context, opts Options) (c *Cluster, err error) {
	if opts.Nodes <= 0 {
		opts.Nodes = 1
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	bins, err := EnsureBinaries(ctx, opts.Mode.binaries()...)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "graphcd-cluster-")
	if err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c = &Cluster{Dir: dir, Binaries: bins, log: logger}
	defer func() {
		if err != nil {
			_ = c.Stop()
			c = nil
		}
	}()
	began := time.Now()
	if c.pki, err = newPKI(dir); err != nil {
		return c, err
	}
	if err = c.retryPorts(ctx, c.startEtcd); err != nil {
		return c, err
	}
	if err = c.retryPorts(ctx, c.startAPIServer); err != nil {
		return c, err
	}
	if opts.Mode == Full {
		for _, start := range []func(context.Context) error{c.startControllerManager, c.startScheduler} {
			if err = c.retryPorts(ctx, start); err != nil {
				return c, err
			}
		}
		if err = c.retryPorts(ctx, c.startKwok); err != nil {
			return c, err
		}
		if err = c.addNodes(ctx, opts.Nodes); err != nil {
			return c, err
		}
	}
	logger.Info("local cluster ready", "mode", opts.Mode, "server", c.Config.Host, "kubeconfig", c.Kubeconfig, "took", time.Since(began).Round(time.Millisecond))
	return c, nil
}

// retryPorts runs start again with new ports when a child lost a race for
// the port it was given.
func (c *Cluster) retryPorts(ctx context.Context, start func(context.Context) error) error {
	var err error
	for range 3 {
		if err = start(ctx); err == nil {
			return nil
		}
		last := c.procs[len(c.procs)-1]
		if !last.addrInUse() {
			return err
		}
		c.log.Warn("port taken, retrying", "component", last.Name)
		c.procs = c.procs[:len(c.procs)-1]
	}
	return err
}

func (c *Cluster) start(name, bin string, args ...string) (*Process, error) {
	p, err := StartProcess(name, filepath.Join(c.Dir, name+".log"), bin, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	client, err := FreePort()
	if err != nil {
		return err
	}
	peer, err := FreePort()
	if err != nil {
		return err
	}
	c.etcdURL = "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	data := filepath.Join(c.Dir, "etcd")
	_ = os.RemoveAll(data)
	p, err := c.start("etcd", c.Binaries.Etcd,
		"--name=local", "--data-dir="+data,
		"--listen-client-urls="+c.etcdURL, "--advertise-client-urls="+c.etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=local="+peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitFor(waitCtx, httpOK(http.DefaultClient, c.etcdURL+"/health"))
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	c.apiPort = port
	return c.runAPIServer(ctx)
}

// runAPIServer starts kube-apiserver on c.apiPort and waits until it is
// ready.
func (c *Cluster) runAPIServer(ctx context.Context) error {
	p, err := c.start("kube-apiserver", c.Binaries.APIServer,
		"--etcd-servers="+c.etcdURL,
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(c.apiPort),
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--cert-dir="+filepath.Join(c.Dir, "apiserver-certs"),
		"--tls-cert-file="+c.pki.ServingCert, "--tls-private-key-file="+c.pki.ServingKey,
		"--client-ca-file="+c.pki.CACert,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+c.pki.SAPublic,
		"--service-account-signing-key-file="+c.pki.SAPrivate,
		"--service-cluster-ip-range=10.0.0.0/16", // room for thousands of Services
		"--authorization-mode=RBAC",
		// KWOK's server is the fake nodes' kubelet, at their InternalIP
		// (127.0.0.1); their Hostname resolves nowhere.
		"--kubelet-preferred-address-types=InternalIP",
		// Pods need no mounted token: KWOK runs no containers, and tests
		// in Minimal mode have no controller creating default accounts.
		"--disable-admission-plugins=ServiceAccount",
		"--allow-privileged=true",
		"--v=0",
	)
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig(); err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return p.WaitFor(waitCtx, func(ctx context.Context) error {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

func (c *Cluster) writeKubeconfig() error {
	c.Kubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{
		Server:               "https://127.0.0.1:" + strconv.Itoa(c.apiPort),
		CertificateAuthority: c.pki.CACert,
	}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificate: c.pki.AdminCert, ClientKey: c.pki.AdminKey}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: "default"}
	cfg.CurrentContext = "local"
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	rc.QPS, rc.Burst = 200, 400
	c.Config = rc
	c.Client, err = kubernetes.NewForConfig(rc)
	return err
}

// componentArgs are the flags shared by controller-manager and scheduler:
// talk to the API as admin and serve their health endpoint on a free port.
func (c *Cluster) componentArgs(name string, port int) []string {
	return []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig,
		"--authorization-kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(c.Dir, name+"-certs"),
	}
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	args := append(c.componentArgs("kube-controller-manager", port),
		"--service-account-private-key-file="+c.pki.SAPrivate,
		"--root-ca-file="+c.pki.CACert,
		"--cluster-signing-cert-file="+c.pki.CACert,
		"--cluster-signing-key-file="+c.pki.CAKey,
		"--use-service-account-credentials=false",
		"--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10",
	)
	p, err := c.start("kube-controller-manager", c.Binaries.ControllerManager, args...)
	if err != nil {
		return err
	}
	return c.waitHealthz(ctx, p, port)
}

func (c *Cluster) startScheduler(ctx context.Context) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	p, err := c.start("kube-scheduler", c.Binaries.Scheduler, c.componentArgs("kube-scheduler", port)...)
	if err != nil {
		return err
	}
	return c.waitHealthz(ctx, p, port)
}

// waitHealthz waits for a component's self-signed /healthz endpoint.
func (c *Cluster) waitHealthz(ctx context.Context, p *Process, port int) error {
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a local component's self-signed cert
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitFor(waitCtx, httpOK(insecure, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz"))
}

func httpOK(client *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", url, resp.Status)
		}
		return nil
	}
}

// PIDs lists the process ids of the cluster's components.
func (c *Cluster) PIDs() []int {
	pids := make([]int, 0, len(c.procs))
	for _, p := range c.procs {
		pids = append(pids, p.PID())
	}
	return pids
}

// Stop ends every component in reverse start order, waits for them to exit,
// and removes the cluster directory. It returns an error if any process
// that mentions the directory is still alive afterwards.
func (c *Cluster) Stop() error {
	if c == nil {
		return nil
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		c.procs[i].Stop(10 * time.Second)
	}
	var errs []error
	for _, p := range c.procs {
		if Alive(p.PID()) {
			errs = append(errs, fmt.Errorf("%s (pid %d) still running after stop", p.Name, p.PID()))
		}
	}
	if left := Leftovers(c.Dir); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes left running after stop:\n%s", strings.Join(left, "\n")))
	}
	if os.Getenv("GRAPHCD_KEEP_CLUSTER_DIR") == "" {
		if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", c.Dir, err))
		}
	}
	return errors.Join(errs...)
}
