package roles

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/controller"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// Options shape an installation. Zero counts are 1.
type Options struct {
	// Bin is the graphcd binary every role runs.
	Bin string
	// Cluster is the management cluster: the CRDs, Applications,
	// settings and Leases live there, in Namespace ("graphcd").
	Cluster   *localcluster.Cluster
	Namespace string
	// LogDir holds a log file per role.
	LogDir string
	// Shards is how many controller shards run, and Replicas how many
	// replicas each shard has (one leads, the others stand by).
	Shards, Replicas int
	// APIReplicas run `graphcd server --controller=false`.
	APIReplicas int
	// RepoServers run on one port of as many loopback addresses, behind
	// one DNS name.
	RepoServers int
	// Env is added to every role's environment (GOMEMLIMIT, say), and
	// ControllerEnv to the controllers' after it.
	Env, ControllerEnv []string
	// ControllerArgs and ServerArgs are added to those roles' flags.
	ControllerArgs, ServerArgs []string
	// Profiles has every role serve Go's runtime profiles on a loopback
	// port of its own (Role.ProfileAddr).
	Profiles bool
	// ServiceAccounts runs the controllers and API replicas as deploy/ha's
	// ServiceAccounts (impersonated), with its RBAC and FlowSchema applied:
	// API Priority and Fairness then treats their requests as in a real
	// installation, where the admin's would be exempt.
	ServiceAccounts bool
}

func (o *Options) defaults() {
	for _, n := range []*int{&o.Shards, &o.Replicas, &o.APIReplicas, &o.RepoServers} {
		if *n < 1 {
			*n = 1
		}
	}
	if o.Namespace == "" {
		o.Namespace = "graphcd"
	}
}

// Installation is graphcd's split roles running on a local cluster.
type Installation struct {
	Options
	Redis    *localredis.Server
	RedisURL string
	// SecretFile holds the key that signs what goes through Redis;
	// CacheSecretFile the one that signs the manifest cache.
	SecretFile, CacheSecretFile string
	// RepoTarget is the gRPC target of the repository servers: a name
	// that resolves to all of them, like a headless Service.
	RepoTarget  string
	RepoServers []*Role
	// Controllers holds each shard's replicas; AddController appends to
	// it, so read it from the goroutine that calls AddController, or
	// through All.
	Controllers [][]*Role
	Servers     []*Role
	ServerURLs  []string

	mu      sync.Mutex // guards Controllers against All in another goroutine
	stopDNS func()
	// kubeconfigs holds the kubeconfig of each ServiceAccount a role runs
	// as (Options.ServiceAccounts); without one a role runs as the admin.
	kubeconfigs map[string]string
}

// Install installs the CRDs, starts Redis and every role, and waits until
// each serves. On error what started is stopped again.
func Install(ctx context.Context, o Options) (_ *Installation, err error) {
	o.defaults()
	in := &Installation{Options: o}
	defer func() {
		if err != nil {
			in.Stop()
		}
	}()
	crds := exec.CommandContext(ctx, o.Bin, "install", "crds", "--kubeconfig", o.Cluster.Kubeconfig)
	if out, err := crds.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("graphcd install crds: %w\n%s", err, out)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	if _, err := o.Cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	if o.ServiceAccounts {
		if in.kubeconfigs, err = in.applyIdentities(ctx); err != nil {
			return nil, err
		}
	}
	if in.Redis, err = localredis.Start(ctx); err != nil {
		return nil, fmt.Errorf("start redis: %w", err)
	}
	in.RedisURL = "redis://:" + in.Redis.Password + "@" + in.Redis.Addr
	// Two keys, as deploy/ha mounts them: what the controllers and API
	// replicas share, and the repository servers' manifest cache.
	in.SecretFile, in.CacheSecretFile = filepath.Join(o.LogDir, "redis.key"), filepath.Join(o.LogDir, "cache.key")
	for _, file := range []string{in.SecretFile, in.CacheSecretFile} {
		// Hex: graphcd trims the file's white space, which raw bytes
		// may start or end with.
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		if err := os.WriteFile(file, []byte(hex.EncodeToString(key)), 0o600); err != nil {
			return nil, err
		}
	}

	port, err := localcluster.FreePort()
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	for i := range o.RepoServers {
		ip := netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + i)})
		ips = append(ips, ip)
		metrics, err := localcluster.FreeAddr()
		if err != nil {
			return nil, err
		}
		r, err := in.role(fmt.Sprintf("repo-server-%d", i), "http://"+metrics+"/healthz",
			"repo-server", "--listen", net.JoinHostPort(ip.String(), strconv.Itoa(port)), "--plaintext",
			"--redis", in.RedisURL, "--cache-secret-file", in.CacheSecretFile, "--metrics-listen", metrics, "--log-format", "text")
		if err != nil {
			return nil, err
		}
		in.RepoServers = append(in.RepoServers, r)
	}
	const repoName = "repo-server.graphcd.test"
	dns, stop, err := ServeDNS(repoName, ips...)
	if err != nil {
		return nil, err
	}
	in.stopDNS = stop
	in.RepoTarget = "dns://" + dns + "/" + repoName + ":" + strconv.Itoa(port)
	in.Controllers = make([][]*Role, o.Shards)
	for shard := range o.Shards {
		for range o.Replicas {
			if _, err := in.newController(shard, o.Shards); err != nil {
				return nil, err
			}
		}
	}
	for i := range o.APIReplicas {
		addr, err := localcluster.FreeAddr()
		if err != nil {
			return nil, err
		}
		in.ServerURLs = append(in.ServerURLs, "http://"+addr)
		args := append(append([]string{"server", "--insecure", "--controller=false", "--listen", addr}, in.shared(serverAccount)...), o.ServerArgs...)
		r, err := in.role(fmt.Sprintf("server-%d", i), "http://"+addr+"/readyz", args...)
		if err != nil {
			return nil, err
		}
		in.Servers = append(in.Servers, r)
	}
	for _, r := range in.All() {
		if err := r.Start(ctx); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// AddController starts one more replica of shard, one of shards, and
// returns it once it serves. Its name is controller-<shard>-<replica>.
func (in *Installation) AddController(ctx context.Context, shard, shards int) (*Role, error) {
	r, err := in.newController(shard, shards)
	if err != nil {
		return nil, err
	}
	return r, r.Start(ctx)
}

func (in *Installation) newController(shard, shards int) (*Role, error) {
	metrics, err := localcluster.FreeAddr()
	if err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.Controllers) <= shard {
		in.Controllers = append(in.Controllers, nil)
	}
	name := fmt.Sprintf("controller-%d-%d", shard, len(in.Controllers[shard]))
	args := append([]string{"controller", "--shards", strconv.Itoa(shards), "--shard", strconv.Itoa(shard), "--metrics-listen", metrics}, in.shared(controllerAccount)...)
	r, err := in.role(name, "http://"+metrics+"/healthz", append(args, in.ControllerArgs...)...)
	if err != nil {
		return nil, err
	}
	r.Env = append(slices.Clip(r.Env), in.ControllerEnv...)
	in.Controllers[shard] = append(in.Controllers[shard], r)
	return r, nil
}

// shared are the flags of the controllers and API replicas; they act as
// ServiceAccount sa when the installation runs its roles as such.
func (in *Installation) shared(sa string) []string {
	kubeconfig := in.Cluster.Kubeconfig
	if k, ok := in.kubeconfigs[sa]; ok {
		kubeconfig = k
	}
	return []string{"--kubeconfig", kubeconfig, "--namespace", in.Namespace, "--log-format", "text",
		"--repo-server-addr", in.RepoTarget, "--repo-server-plaintext",
		"--redis", in.RedisURL, "--redis-secret-file", in.SecretFile}
}

func (in *Installation) role(name, health string, args ...string) (*Role, error) {
	r := &Role{Name: name, Bin: in.Bin, Args: args, Env: in.Env, Health: health, LogPath: filepath.Join(in.LogDir, name+".log")}
	if in.Profiles {
		addr, err := localcluster.FreeAddr()
		if err != nil {
			return nil, err
		}
		r.ProfileAddr = addr
		r.Args = append(r.Args, "--profile-listen", addr)
	}
	return r, nil
}

// All returns every role: repository servers, controllers, API replicas.
func (in *Installation) All() []*Role {
	in.mu.Lock()
	defer in.mu.Unlock()
	all := append([]*Role{}, in.RepoServers...)
	for _, replicas := range in.Controllers {
		all = append(all, replicas...)
	}
	return append(all, in.Servers...)
}

// Exits reports the first role whose process ends on its own (not by Stop
// or Kill), looking every second until ctx ends: where a kubelet would
// restart the container, a harness measures something else from then on
// and should stop and say why. The channel closes after the report or
// when ctx ends.
func (in *Installation) Exits(ctx context.Context) <-chan error {
	out := make(chan error, 1)
	go func() {
		defer close(out)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for _, r := range in.All() {
				if r.exitedOnItsOwn() {
					out <- fmt.Errorf("%s exited on its own; its log ends:\n%s", r.Name, r.Process().LogTail(20))
					return
				}
			}
		}
	}()
	return out
}

// Role is the role called name, nil when there is none.
func (in *Installation) Role(name string) *Role {
	for _, r := range in.All() {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// LeaseHolder is the holder of shard's Lease, "" when none.
func (in *Installation) LeaseHolder(ctx context.Context, shard int) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := in.Cluster.Client.CoordinationV1().Leases(in.Namespace).Get(ctx, controller.LeaseName(shard), metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// Leader is the running replica of shard that holds its Lease, nil (with
// the holder's identity) when none does.
func (in *Installation) Leader(ctx context.Context, shard int) (*Role, string) {
	holder := in.LeaseHolder(ctx, shard)
	for _, r := range in.Controllers[shard] {
		if holder != "" && r.Running() && r.LeaseIdentity() == holder {
			return r, holder
		}
	}
	return nil, holder
}

// AdminPassword is the initial admin password the first API replica wrote.
func (in *Installation) AdminPassword(ctx context.Context) (string, error) {
	s, err := in.Cluster.Client.CoreV1().Secrets(in.Namespace).Get(ctx, "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("initial admin secret: %w", err)
	}
	if len(s.Data["password"]) == 0 {
		return "", errors.New("the initial admin secret holds no password")
	}
	return string(s.Data["password"]), nil
}

// Stop stops every role, then the DNS server and Redis.
func (in *Installation) Stop() {
	all := in.All()
	for i := len(all) - 1; i >= 0; i-- {
		all[i].Stop()
	}
	if in.stopDNS != nil {
		in.stopDNS()
	}
	if in.Redis != nil {
		_ = in.Redis.Stop()
	}
}
