package localcluster

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
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

func (c *Cluster) startKwok(ctx context.Context) error {
	stages := filepath.Join(c.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(stages, kwokStages, 0o600); err != nil {
		return fmt.Errorf("write kwok stages: %w", err)
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	p, err := c.start("kwok", c.Binaries.Kwok,
		"--config="+stages,
		"--kubeconfig="+c.Kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector="+kwokNodeAnnotation+"=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16", "--node-ip=10.96.0.1",
		"--server-address=127.0.0.1:"+strconv.Itoa(port),
	)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitFor(waitCtx, httpOK(http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(port)+"/healthz"))
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
