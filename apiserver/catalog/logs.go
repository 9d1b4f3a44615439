package catalog

import (
	"context"
	"fmt"
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// LogOptions select what PodLogs reads.
type LogOptions struct {
	Container    string
	TailLines    *int64
	SinceSeconds *int64
	// Follow keeps the stream open for new lines.
	Follow bool
	// LimitBytes stops the stream after that many bytes (0: no limit).
	LimitBytes int64
}

// maxClusterClients bounds the clients kept per cluster configuration (a
// cluster's configuration is replaced when its Secret changes).
const maxClusterClients = 64

// PodLogs streams the logs of Pods on the destination clusters of
// applications.
type PodLogs struct {
	clusters *Clusters
	clients  *clientsets
}

// NewPodLogs reads logs on the clusters of c.
func NewPodLogs(c *Clusters) *PodLogs {
	return &PodLogs{clusters: c, clients: newClientsets()}
}

// Stream opens the log stream of pod in namespace on the cluster dest
// names. The caller closes it.
func (p *PodLogs) Stream(ctx context.Context, dest v1alpha1.ApplicationDestination, namespace, pod string, o LogOptions) (io.ReadCloser, error) {
	c, err := p.clusters.reg.Resolve(dest)
	if err != nil {
		return nil, err
	}
	client, err := p.clients.get(c.RESTConfig)
	if err != nil {
		return nil, err
	}
	opts := &corev1.PodLogOptions{Container: o.Container, TailLines: o.TailLines, SinceSeconds: o.SinceSeconds, Follow: o.Follow}
	if o.LimitBytes > 0 {
		opts.LimitBytes = &o.LimitBytes
	}
	rc, err := client.CoreV1().Pods(namespace).GetLogs(pod, opts).Stream(ctx)
	if err != nil {
		return nil, fmt.Errorf("logs of pod %s/%s: %w", namespace, pod, err)
	}
	return rc, nil
}

// clientsets keeps a clientset per cluster configuration.
type clientsets struct {
	mu      sync.Mutex
	clients map[*rest.Config]kubernetes.Interface
}

func newClientsets() *clientsets {
	return &clientsets{clients: map[*rest.Config]kubernetes.Interface{}}
}

// get returns a clientset for cfg, made once per configuration (the
// registry keeps a cluster's configuration until its Secret changes).
func (cs *clientsets) get(cfg *rest.Config) (kubernetes.Interface, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c, ok := cs.clients[cfg]; ok {
		return c, nil
	}
	if len(cs.clients) >= maxClusterClients {
		clear(cs.clients) // configurations of clusters since changed
	}
	c, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return nil, err
	}
	cs.clients[cfg] = c
	return c, nil
}
