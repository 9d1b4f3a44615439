//go:build integration

package terminal_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/apiserver/catalog"
	"github.com/graphcd/graphcd/config/crd"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The shared fixtures: a local cluster whose KWOK node runs exec'd
// commands on this machine, the catalog of Applications and AppProjects,
// and the destination clusters (the local cluster is
// https://kubernetes.default.svc).
var (
	cluster     *localcluster.Cluster
	objects     *catalog.Catalog
	clusterList *catalog.Clusters
)

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Full}, &cluster, startCatalog))
}

func startCatalog(c *localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	fail := func(err error) (func(), error) { cancel(); return nil, err }
	if err := crd.Install(ctx, apiextensionsclientset.NewForConfigOrDie(c.Config)); err != nil {
		return fail(err)
	}
	cat, ready, err := catalog.Start(ctx, c.Config, "", nil)
	if err != nil {
		return fail(err)
	}
	select {
	case <-ready:
	case <-time.After(time.Minute):
		return fail(fmt.Errorf("application index did not sync"))
	}
	objects = cat
	const secretsNS = "graphcd-clusters"
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretsNS}}, metav1.CreateOptions{}); err != nil {
		return fail(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	registry, err := clusters.New(clusters.Options{Client: c.Client, Namespace: secretsNS, InCluster: c.Config, Logger: quiet})
	if err != nil {
		return fail(err)
	}
	if clusterList, err = catalog.StartClusters(ctx, registry, quiet); err != nil {
		return fail(err)
	}
	return cancel, nil
}
