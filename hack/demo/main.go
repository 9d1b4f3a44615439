// Command demo runs graphcd the way `make demo` shows it: a full local
// cluster (etcd, kube-apiserver, controller-manager, scheduler, KWOK nodes),
// the CRDs, and `graphcd server` against it; a git repository with the
// sample apps of hack/demo/apps served over smart HTTP on loopback; and one
// Application per sample (the guestbook synced automatically, the others on
// demand). Ctrl-C stops everything it started.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/graphcd/graphcd/hack/demo/demorepo"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

func main() {
	// Children are started from this goroutine, locked to the main thread,
	// so Pdeathsig kills them only when the demo itself dies.
	runtime.LockOSThread()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	graphcd := flag.String("graphcd", "bin/graphcd", "path of the graphcd binary")
	listen := flag.String("listen", "127.0.0.1:8080", "address graphcd server listens on")
	nodes := flag.Int("nodes", 2, "number of KWOK fake nodes")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger.Info("starting local cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok)")
	cluster, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Full, Nodes: *nodes, Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		logger.Info("stopping local cluster")
		if err := cluster.Stop(); err != nil {
			logger.Error("stop cluster", "err", err)
			return
		}
		logger.Info("local cluster stopped; nothing left running")
	}()

	// Applications, settings and repository Secrets live here.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace %s: %w", namespace, err)
	}

	url := "http://" + *listen
	if err := writeAuthSettings(ctx, cluster.Client, namespace, url); err != nil {
		return err
	}

	repo, err := serveRepo(cluster.Dir)
	if err != nil {
		return err
	}
	defer repo.Close()

	server := exec.Command(*graphcd, "server", "--insecure", "--listen", *listen, "--install-crds", "--kubeconfig", cluster.Kubeconfig) //nolint:noctx // stopped with SIGTERM below, for a graceful shutdown
	server.Stdout, server.Stderr = os.Stdout, os.Stderr
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := server.Start(); err != nil {
		return fmt.Errorf("start graphcd server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()

	if err := waitReady(ctx, url+"/readyz", exited); err != nil {
		_ = server.Process.Signal(syscall.SIGTERM)
		return err
	}
	password, err := adminPassword(ctx, cluster.Client, namespace)
	var apps client.Client
	if err == nil {
		apps, err = newClient(cluster.Config)
	}
	if err == nil {
		err = createApps(ctx, apps, repo.URL)
	}
	if err != nil {
		_ = server.Process.Signal(syscall.SIGTERM)
		if exit := <-exited; exit != nil { // the cluster stops only after its clients
			logger.Info("graphcd server stopped", "exit", exit)
		}
		return err
	}
	printTry(url, cluster.Kubeconfig, cluster.Binaries.Kubectl, repo, password)
	go reportApps(ctx, apps)

	select {
	case err := <-exited:
		return fmt.Errorf("graphcd server exited: %w", err)
	case <-ctx.Done():
	}
	logger.Info("stopping graphcd server")
	_ = server.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		logger.Info("graphcd server stopped", "exit", err)
	case <-time.After(15 * time.Second):
		_ = server.Process.Kill()
		logger.Info("graphcd server killed", "exit", <-exited)
	}
	return nil
}

// waitReady polls the server's /readyz until it answers 200.
func waitReady(ctx context.Context, url string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("graphcd server exited before it was ready: %w", err)
		case <-ctx.Done():
			return errors.New("graphcd server did not become ready within 2 minutes")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// printTry tells a newcomer what to look at and what to do next.
func printTry(url, kubeconfig, kubectl string, repo *demorepo.Repo, password string) {
	fmt.Printf(`
graphcd is running, with four sample apps from %[4]s

  Console:   %[1]s/
  Log in:    admin / %[6]s   (the admin account; the password is in Secret graphcd/graphcd-initial-admin-secret)
             or SSO: %[1]s/auth/login  as %[7]s / %[8]s (embedded Dex; group %[9]s is admin)
  GraphQL:   %[1]s/api/graphql
  Try:       TOKEN=$(curl -s %[1]s/auth/login -H 'Content-Type: application/json' -d '{"username":"admin","password":"%[6]s"}' | sed 's/.*"token":"\([^"]*\)".*/\1/')
             curl -s %[1]s/api/graphql -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"query":"{ me { username } applications { totalCount edges { node { name status { sync { status } health { status } } } } } }"}'
  Insights:  %[1]s/insights   deploys, lead time, change failure rate and time to restore (docs/insights.md);
             guestbook's first automated sync is its first deploy, with the lead time from the demo commit.
             curl -s %[1]s/api/graphql -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"query":"{ insights(scope: INSTALLATION, from: \"%[10]s\", to: \"%[11]s\") { applications total { deploys failedDeploys leadTimeMedianSeconds syncs driftSeconds } } }"}'
  Cluster:   export KUBECONFIG=%[2]s
             %[3]s get applications -n graphcd
             %[3]s get deploy,svc,pods -n demo-guestbook
  Sync:      guestbook syncs by itself; the others on request, the Argo CD way:
             %[3]s patch application sync-waves -n graphcd --type merge -p '{"operation":{"sync":{}}}'
             %[3]s get application sync-waves -n graphcd -o jsonpath='{range .status.operationState.syncResult.resources[*]}{.syncPhase} {.syncWave} {.kind}/{.name} {.hookPhase}{"\n"}{end}'
  Self-heal: %[3]s scale deployment guestbook-web -n demo-guestbook --replicas 1
  Change:    cd %[5]s
             edit guestbook/deployment.yaml (replicas), then: git commit -am "scale guestbook" && git push
             Git is polled every few minutes; to see the push at once:
             %[3]s annotate application guestbook -n graphcd argocd.argoproj.io/refresh=normal --overwrite

Press Ctrl-C to stop everything.

`, url, kubeconfig, kubectl, repo.URL, repo.WorkDir, password, ssoEmail, ssoPassword, ssoGroup,
		time.Now().UTC().AddDate(0, 0, -6).Format(time.DateOnly)+"T00:00:00Z", time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)+"T00:00:00Z")
}
