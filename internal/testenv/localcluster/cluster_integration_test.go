//go:build integration

package localcluster_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster))
}

// A Deployment rolls out on the fake node: controller-manager creates the
// ReplicaSet and Pods, the scheduler binds them, KWOK makes them Ready.
func TestDeploymentBecomesReady(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	var got *appsv1.Deployment
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = cluster.Client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 2 && got.Status.AvailableReplicas == 2, nil
	})
	if err != nil {
		t.Fatalf("deployment not 2/2 ready: %v (status %+v)", err, got.Status)
	}
	pods, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" || p.Status.PodIP == "" {
			t.Errorf("pod %s: phase %s node %q ip %q, want Running on a node with an IP", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP)
		}
	}
}

// kubectl from the cache talks to the cluster with the admin kubeconfig.
func TestKubectlGetNodes(t *testing.T) {
	t.Parallel()
	bins, err := localcluster.EnsureBinaries(t.Context(), localcluster.BinKubectl)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), bins.Kubectl, "--kubeconfig", cluster.Kubeconfig, "get", "nodes", "--no-headers").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get nodes: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kwok-node-0") || !strings.Contains(string(out), "Ready") {
		t.Errorf("kubectl get nodes = %q, want kwok-node-0 Ready", out)
	}
}

// Stop ends every process a cluster started, and removes its directory.
func TestStopLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	c, err := localcluster.Start(t.Context(), localcluster.Options{Mode: localcluster.Minimal})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	pids := c.PIDs()
	if len(pids) != 2 {
		t.Errorf("minimal cluster runs %d processes, want 2 (etcd, kube-apiserver)", len(pids))
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	for _, pid := range pids {
		if localcluster.Alive(pid) {
			t.Errorf("pid %d still alive after Stop", pid)
		}
	}
	if left := localcluster.Leftovers(c.Dir); len(left) > 0 {
		t.Errorf("leftover processes: %v", left)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists (stat err %v)", c.Dir, err)
	}
}

// A Pod on a fake node has a log: KWOK serves it as the node's kubelet,
// through the API server.
func TestPodLogs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
	if _, err := cluster.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "talker", metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("pod not running: %v", err)
	}
	raw, err := cluster.Client.CoreV1().Pods(ns).GetLogs("talker", &corev1.PodLogOptions{Container: "app"}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("logs: %v", err)
	}
	if got, want := strings.TrimSpace(string(raw)), strings.Join(localcluster.PodLogLines, "\n"); got != want {
		t.Errorf("logs = %q, want %q", got, want)
	}
	tail := int64(1)
	raw, err = cluster.Client.CoreV1().Pods(ns).GetLogs("talker", &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		t.Fatalf("last line: %v", err)
	}
	if got, want := strings.TrimSpace(string(raw)), localcluster.PodLogLines[len(localcluster.PodLogLines)-1]; got != want {
		t.Errorf("last line = %q, want %q", got, want)
	}
}
