package localcluster

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// kwokStages describe how KWOK moves fake nodes and pods through their
// lifecycle; standalone KWOK does nothing without them.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// kwokNodeAnnotation marks the nodes this cluster's KWOK manages.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// PodLogLines is the log of every container of the fake nodes: KWOK
// serves it as a kubelet would, so `kubectl logs` and graphcd's podLogs
// read it through the API server like a real log (a follow request sees
// these lines, then stays open).
var PodLogLines = []string{
	"graphcd local cluster: this is a KWOK fake container's log",
	"KWOK serves the same lines for every container of its fake nodes",
	"GET /healthz 200",
}

// kwokLogs is the configuration that makes KWOK serve the file at path as
// the log of every Pod on its nodes.
const kwokLogs = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: graphcd-fake-logs
spec:
  selector: {}
  logs:
  - logsFile: %q
    follow: true
`

// kwokExec is the configuration that makes KWOK serve `kubectl exec` into
// every container of its nodes by running the command on this machine,
// in a directory of the cluster's own (the %q): a terminal into a fake
// pod runs a real shell.
const kwokExec = `---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterExec
metadata:
  name: graphcd-fake-exec
spec:
  selector: {}
  execs:
  - local:
      workDir: %q
      envs:
      - name: PS1
        value: "fake$ "
`

// startKwok runs KWOK with graphcd's stages. Its server is the fake
// nodes' kubelet: the nodes' InternalIP is 127.0.0.1 and their kubelet
// port KWOK's, so the API server proxies pod logs and exec to it over
// HTTPS.
func (c *Cluster) startKwok(ctx context.Context) error {
	// KWOK reads the file as a container runtime writes it (CRI format).
	var log strings.Builder
	now := time.Now().UTC()
	for i, line := range PodLogLines {
		at := now.Add(time.Duration(i-len(PodLogLines)) * time.Second)
		fmt.Fprintf(&log, "%s stdout F %s\n", at.Format(time.RFC3339Nano), line)
	}
	logFile := filepath.Join(c.Dir, "kwok-container.log")
	if err := os.WriteFile(logFile, []byte(log.String()), 0o600); err != nil {
		return fmt.Errorf("write kwok container log: %w", err)
	}
	config := filepath.Join(c.Dir, "kwok.yaml")
	execDir := filepath.Join(c.Dir, "kwok-exec")
	if err := os.MkdirAll(execDir, 0o700); err != nil {
		return fmt.Errorf("create kwok exec directory: %w", err)
	}
	conf := slices.Concat(kwokStages, []byte(fmt.Sprintf(kwokLogs, logFile)), []byte(fmt.Sprintf(kwokExec, execDir)))
	if err := os.WriteFile(config, conf, 0o600); err != nil {
		return fmt.Errorf("write kwok config: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	p, err := c.start("kwok", c.Binaries.Kwok,
		"--config="+config,
		"--kubeconfig="+c.Kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+kwokNodeAnnotation+"=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16", "--node-ip=127.0.0.1", "--node-port="+strconv.Itoa(port),
		"--server-address=127.0.0.1:"+strconv.Itoa(port),
		"--tls-cert-file="+c.pki.ServingCert, "--tls-private-key-file="+c.pki.ServingKey,
	)
	if err != nil {
		return err
	}
	client, err := c.pki.client()
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitFor(waitCtx, httpOK(client, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz"))
}

// addNodes registers n fake nodes and waits until KWOK reports them Ready.
func (c *Cluster) addNodes(ctx context.Context, n int) error {
	for i := range n {
		name := "kwok-node-" + strconv.Itoa(i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{kwokNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
				Labels: map[string]string{
					"type": "kwok", "kubernetes.io/hostname": name,
					"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				},
			},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", name, err)
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(waitCtx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
		if err != nil {
			return false, nil //nolint:nilerr // keep polling through transient API errors
		}
		ready := 0
		for _, node := range nodes.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready >= n, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d fake nodes to be Ready: %w", n, err)
	}
	return nil
}
