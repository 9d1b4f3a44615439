package localcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Setup prepares a package's shared fixtures on the started cluster (CRDs,
// a controller...) and returns how to tear them down.
type Setup func(*Cluster) (teardown func(), err error)

// RunMain starts a cluster for a test package, runs the setups, its
// tests, the teardowns (in reverse), stops the cluster and checks that none
// of its processes survived. Use it from TestMain; it returns the exit code
// for os.Exit. *into is set before the setups run. An interrupt
// (SIGINT/SIGTERM) stops the cluster before exiting.
func RunMain(m *testing.M, opts Options, into **Cluster, setups ...Setup) int {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	// controller-runtime's clients log nothing a test needs, and print a
	// stack trace when no logger was ever set.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	c, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: start %s cluster: %v\n", opts.Mode, err)
		return 1
	}
	*into = c

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		if _, ok := <-sigs; ok {
			_ = c.Stop()
			os.Exit(130)
		}
	}()

	code := 0
	var teardowns []func()
	for _, setup := range setups {
		teardown, err := setup(c)
		if err != nil {
			fmt.Fprintf(os.Stderr, "localcluster: setup: %v\n", err)
			code = 1
			break
		}
		teardowns = append(teardowns, teardown)
	}
	if code == 0 {
		code = m.Run()
	}
	for i := len(teardowns) - 1; i >= 0; i-- {
		teardowns[i]()
	}
	signal.Stop(sigs)
	close(sigs)
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "localcluster: %v\n", err)
		code = 1
	}
	return code
}

var nsSeq atomic.Int64

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace unique to the test and deletes it when the
// test ends, so tests sharing a cluster stay apart.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(base) > 40 {
		base = strings.TrimRight(base[:40], "-")
	}
	name := fmt.Sprintf("%s-%d", base, nsSeq.Add(1))
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}
