package catalog

import (
	"context"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// ExecStreams are the streams of a command run with a terminal: stdin
// from the user, stdout (which carries stderr too: a terminal merges
// them) to the user, and the terminal's size as it changes.
type ExecStreams struct {
	Stdin  io.Reader
	Stdout io.Writer
	// Sizes gives the terminal's size, first and on every resize; nil
	// when the size is not known.
	Sizes remotecommand.TerminalSizeQueue
}

// PodExec runs commands in the containers of Pods on the destination
// clusters of applications, as `kubectl exec -it` does: over a websocket
// to the cluster's API server, or SPDY where the cluster does not speak
// the websocket protocol.
type PodExec struct {
	clusters *Clusters
	clients  *clientsets
}

// NewPodExec runs commands on the clusters of c.
func NewPodExec(c *Clusters) *PodExec {
	return &PodExec{clusters: c, clients: newClientsets()}
}

// Exec runs command in container of pod in namespace on the cluster dest
// names, with a terminal, until the command ends or ctx does.
func (p *PodExec) Exec(ctx context.Context, dest v1alpha1.ApplicationDestination, namespace, pod, container string, command []string, s ExecStreams) error {
	c, err := p.clusters.reg.Resolve(dest)
	if err != nil {
		return err
	}
	client, err := p.clients.get(c.RESTConfig)
	if err != nil {
		return err
	}
	u := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: container, Command: command,
			Stdin: true, Stdout: true, TTY: true,
		}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(c.RESTConfig, "GET", u.String())
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s: %w", namespace, pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.RESTConfig, "POST", u)
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s: %w", namespace, pod, err)
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{
		Stdin: s.Stdin, Stdout: s.Stdout, Tty: true, TerminalSizeQueue: s.Sizes,
	})
	if err != nil {
		return fmt.Errorf("exec in pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}
