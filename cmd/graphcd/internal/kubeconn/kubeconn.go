// Package kubeconn connects graphcd's commands to the Kubernetes API: it
// finds the client configuration (--kubeconfig, $KUBECONFIG or the
// in-cluster service account), sets the client-side request limits, and
// checks that the API server answers before a command goes on, so that a
// wrong configuration fails at once with one line that says why.
package kubeconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/graphcd/graphcd/internal/kubeerror"
	"github.com/graphcd/graphcd/internal/version"
)

// apiCheckTimeout bounds the start-up check that the Kubernetes API answers.
const apiCheckTimeout = 10 * time.Second

// Options select and tune the Kubernetes API connection.
type Options struct {
	// Kubeconfig is the --kubeconfig value; Origin names where it came
	// from, for errors ("--kubeconfig" or "GRAPHCD_KUBECONFIG").
	Kubeconfig, Origin string
	// Context is the kubeconfig context to use; empty uses the current
	// one.
	Context string
	// Limits are the client-side request limits; zero keeps client-go's.
	Limits
}

// Default client-side limits of requests to the Kubernetes API. They are
// high on purpose: graphcd reads through informers, so nearly every
// request is a write a sync or a status needs, and the API server's own
// API Priority and Fairness is what protects it; a low client limit (Argo
// CD's 50/s) only makes a thousand syncs wait in line (see
// docs/benchmarks.md).
const (
	defaultQPS   = 500
	defaultBurst = 1000
)

// Limits are the --kube-qps and --kube-burst flags the server and the
// controller commands share.
type Limits struct {
	QPS   float32
	Burst int
}

// AddFlags adds --kube-qps and --kube-burst to f.
func (l *Limits) AddFlags(f *pflag.FlagSet) {
	f.Float32Var(&l.QPS, "kube-qps", defaultQPS, "Kubernetes API requests per second (client side)")
	f.IntVar(&l.Burst, "kube-burst", defaultBurst, "Kubernetes API request burst (client side)")
}

// Conn is a checked connection to the Kubernetes API.
type Conn struct {
	Config *rest.Config
	APIExt apiextensionsclientset.Interface
	// Host is the API server URL without credentials, safe to print.
	Host string
	// ServerVersion is the API server's version, e.g. "v1.37.2".
	ServerVersion string
}

// Connect loads the Kubernetes client configuration and checks, within
// apiCheckTimeout, that the API server answers.
func Connect(ctx context.Context, o Options) (*Conn, error) {
	cfg, err := loadConfig(o.Kubeconfig, o.Origin, o.Context)
	if err != nil {
		return nil, err
	}
	kubeerror.Wrap(cfg)
	if o.QPS > 0 {
		cfg.QPS = o.QPS
	}
	if o.Burst > 0 {
		cfg.Burst = o.Burst
	}
	cfg.UserAgent = "graphcd/" + version.Get().Version
	k := &Conn{Config: cfg, Host: safeHost(cfg.Host)}
	if k.APIExt, err = apiextensionsclientset.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", k.Host, err)
	}
	if k.ServerVersion, err = checkAPI(ctx, k.APIExt.Discovery().RESTClient(), k.Host); err != nil {
		return nil, err
	}
	return k, nil
}

// loadConfig resolves the client configuration: the --kubeconfig file,
// else the files in $KUBECONFIG, else the in-cluster service account;
// kubeContext, when set, picks a context of the file.
func loadConfig(path, origin, kubeContext string) (*rest.Config, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("kubeconfig %s (from %s): %s", path, origin, statReason(err))
		}
		cfg, err := clientConfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, kubeContext)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s (from %s): %w", path, origin, err)
		}
		return cfg, nil
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		cfg, err := clientConfig(&clientcmd.ClientConfigLoadingRules{Precedence: filepath.SplitList(env)}, kubeContext)
		if clientcmd.IsEmptyConfig(err) {
			return nil, fmt.Errorf("KUBECONFIG=%s: no kubeconfig found there", env)
		}
		if err != nil {
			return nil, fmt.Errorf("KUBECONFIG=%s: %w", env, err)
		}
		return cfg, nil
	}
	if kubeContext != "" {
		return nil, fmt.Errorf("context %q: no kubeconfig to find it in: pass --kubeconfig or set KUBECONFIG", kubeContext)
	}
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		return nil, errors.New("no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a cluster")
	}
	if err != nil {
		return nil, fmt.Errorf("in-cluster Kubernetes configuration: %w", err)
	}
	return cfg, nil
}

func clientConfig(rules *clientcmd.ClientConfigLoadingRules, kubeContext string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext}).ClientConfig()
}

func statReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "file does not exist"
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkAPI asks the API server for its version and returns it, or an error
// that says in one line why the API cannot be used.
func checkAPI(ctx context.Context, c rest.Interface, host string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, apiCheckTimeout)
	defer cancel()
	raw, err := c.Get().AbsPath("/version").Do(ctx).Raw()
	if err != nil {
		if status := apierrors.APIStatus(nil); errors.As(err, &status) {
			return "", fmt.Errorf("kubernetes API at %s refused GET /version: %w", host, err)
		}
		return "", fmt.Errorf("kubernetes API at %s unreachable: %s", host, shortCause(ctx, err))
	}
	var info k8sversion.Info
	if err := json.Unmarshal(raw, &info); err != nil {
		return "", fmt.Errorf("kubernetes API at %s: unexpected answer to GET /version: %w", host, err)
	}
	return info.GitVersion, nil
}

// shortCause strips the request URL from a transport error: the host is
// already in the message and the URL adds only noise.
func shortCause(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", apiCheckTimeout)
	case errors.Is(ctx.Err(), context.Canceled):
		return "interrupted"
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err.Error()
	}
	return err.Error()
}

// safeHost returns the API server URL without user information, so it can
// be printed.
func safeHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return "(invalid server URL)"
	}
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}
