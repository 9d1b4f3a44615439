//go:build integration

package clusters_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/clusters"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// management runs graphcd's Secrets; second is the destination cluster.
var management, second *localcluster.Cluster

// secondStopErr is set when the destination cluster does not stop
// cleanly; TestMain fails the run then.
var secondStopErr error

func TestMain(m *testing.M) {
	code := localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &management, startSecond)
	if secondStopErr != nil {
		fmt.Fprintf(os.Stderr, "destination cluster: %v\n", secondStopErr)
		code = 1
	}
	os.Exit(code)
}

// startSecond starts the destination cluster next to the management one;
// its teardown stops it and checks that none of its processes are left.
func startSecond(*localcluster.Cluster) (func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Options{Mode: localcluster.Minimal})
	if err != nil {
		return nil, fmt.Errorf("start destination cluster: %w", err)
	}
	second = c
	return func() { secondStopErr = c.Stop() }, nil
}

var seq atomic.Int64

// serviceAccountToken creates a cluster-admin ServiceAccount on the second
// cluster and returns a token for it.
func serviceAccountToken(t *testing.T) string {
	t.Helper()
	ctx := t.Context()
	name := fmt.Sprintf("graphcd-%d", seq.Add(1))
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}}
	if _, err := second.Client.CoreV1().ServiceAccounts("kube-system").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: name}},
	}
	if _, err := second.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = second.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = second.Client.CoreV1().ServiceAccounts("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	tr, err := second.Client.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// secondCA is the second cluster's CA certificate, base64 as in a cluster
// Secret's caData.
func secondCA(t *testing.T) string {
	t.Helper()
	ca := second.Config.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(second.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	return base64.StdEncoding.EncodeToString(ca)
}

// tokenConfig is a cluster Secret config logging in with token.
func tokenConfig(t *testing.T, token string) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{
		"bearerToken":     token,
		"tlsClientConfig": map[string]any{"caData": secondCA(t)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// clusterSecret builds a cluster Secret in ns with the given label key.
func clusterSecret(ns, name, label string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{label: secretcodec.TypeCluster}},
		StringData: data,
	}
}

func createSecret(t *testing.T, s *corev1.Secret) {
	t.Helper()
	if _, err := management.Client.CoreV1().Secrets(s.Namespace).Create(t.Context(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func updateSecret(t *testing.T, s *corev1.Secret) {
	t.Helper()
	if _, err := management.Client.CoreV1().Secrets(s.Namespace).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startRegistry starts a Registry over ns whose OnChange servers arrive on
// the returned channel.
func startRegistry(t *testing.T, ns string, inCluster *rest.Config) (*clusters.Registry, <-chan string) {
	t.Helper()
	r, err := clusters.New(clusters.Options{Client: management.Client, Namespace: ns, InCluster: inCluster})
	if err != nil {
		t.Fatal(err)
	}
	changes := make(chan string, 100)
	r.OnChange(func(server string) { changes <- server })
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r, changes
}

// awaitChange blocks until OnChange reports server.
func awaitChange(t *testing.T, changes <-chan string, server string) {
	t.Helper()
	for {
		select {
		case got := <-changes:
			if got == server {
				return
			}
		case <-t.Context().Done():
			t.Fatalf("no change reported for %s", server)
		}
	}
}

// namespacesVia lists namespace names with a client built from c.
func namespacesVia(t *testing.T, c *clusters.Cluster) ([]string, error) {
	t.Helper()
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.QPS, cfg.Burst = 20, 40
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	list, err := client.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := make([]string, len(list.Items))
	for i, ns := range list.Items {
		names[i] = ns.Name
	}
	return names, nil
}

// onlyOnSecond creates a namespace that exists on the second cluster only.
func onlyOnSecond(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("only-on-second-%d", seq.Add(1))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := second.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = second.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSecondClusterBySecret(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	server := second.Config.Host
	createSecret(t, clusterSecret(ns, "second", wellknown.SecretTypeLabel, map[string]string{
		"name": "second", "server": server + "/", "namespaces": "apps, tools", "clusterResources": "true",
		"config": tokenConfig(t, serviceAccountToken(t)),
	}))
	r, _ := startRegistry(t, ns, nil)

	byServer, ok := r.ByServer(server)
	if !ok {
		t.Fatalf("ByServer(%s) found nothing; errors: %v", server, r.Errors())
	}
	byName, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if byName != byServer || byName.Server != server || !byName.ClusterResources || strings.Join(byName.Namespaces, ",") != "apps,tools" {
		t.Errorf("by name %+v, by server %+v: want the same cluster %s with namespaces apps,tools", byName, byServer, server)
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Server: server, Name: "second"}); err != nil {
		t.Errorf("Resolve with agreeing name and server: %v", err)
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: clusters.InClusterName}); err == nil {
		t.Error("in-cluster resolved although the Registry has no in-cluster config")
	}

	marker := onlyOnSecond(t)
	names, err := namespacesVia(t, byServer)
	if err != nil {
		t.Fatalf("list namespaces with the registered credentials: %v", err)
	}
	if !contains(names, marker) {
		t.Errorf("namespaces %v do not include %s: the client did not reach the second cluster", names, marker)
	}
	if contains(names, ns) {
		t.Errorf("namespaces %v include the management namespace %s", names, ns)
	}
}

func TestInClusterUsesOwnConfig(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	r, changes := startRegistry(t, ns, management.Config)
	c, err := r.Resolve(v1alpha1.ApplicationDestination{Name: clusters.InClusterName})
	if err != nil {
		t.Fatal(err)
	}
	names, err := namespacesVia(t, c)
	if err != nil || !contains(names, ns) {
		t.Fatalf("in-cluster namespaces = %v, %v; want them to include %s", names, err, ns)
	}

	// A Secret for the in-cluster server renames it and limits its
	// namespaces, and keeps the controller's own credentials.
	createSecret(t, clusterSecret(ns, "local", wellknown.ArgoSecretTypeLabel, map[string]string{
		"name": "management", "server": clusters.InClusterServer, "namespaces": ns,
	}))
	awaitChange(t, changes, clusters.InClusterServer)
	c, err = r.Resolve(v1alpha1.ApplicationDestination{Name: "management"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.Namespaces, ",") != ns {
		t.Errorf("namespaces = %v, want [%s]", c.Namespaces, ns)
	}
	if names, err := namespacesVia(t, c); err != nil || !contains(names, ns) {
		t.Errorf("renamed in-cluster namespaces = %v, %v; want them to include %s", names, err, ns)
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: clusters.InClusterName}); err == nil {
		t.Error("the default name in-cluster still resolves after the Secret renamed the cluster")
	}
}

func TestRotateAndDelete(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	server := second.Config.Host
	r, changes := startRegistry(t, ns, nil)

	s := clusterSecret(ns, "second", wellknown.ArgoSecretTypeLabel, map[string]string{
		"name": "second", "server": server, "config": tokenConfig(t, serviceAccountToken(t)),
	})
	createSecret(t, s)
	awaitChange(t, changes, server)
	before, ok := r.ByName("second")
	if !ok {
		t.Fatalf("cluster not registered after its Secret was created; errors: %v", r.Errors())
	}

	rotated := serviceAccountToken(t)
	s.StringData["config"] = tokenConfig(t, rotated)
	updateSecret(t, s)
	awaitChange(t, changes, server)
	after, ok := r.ByServer(server)
	if !ok || after.RESTConfig.BearerToken != rotated || after.RESTConfig.BearerToken == before.RESTConfig.BearerToken {
		t.Fatal("the registry does not hold the rotated token")
	}
	if _, err := namespacesVia(t, after); err != nil {
		t.Errorf("the rotated credentials do not work: %v", err)
	}

	if err := management.Client.CoreV1().Secrets(ns).Delete(t.Context(), s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitChange(t, changes, server)
	if _, ok := r.ByServer(server); ok {
		t.Error("cluster still registered after its Secret was deleted")
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Server: server}); err == nil || !strings.Contains(err.Error(), "cluster "+server+" not found") {
		t.Errorf("Resolve after delete: %v, want not found", err)
	}
}

func TestBadSecrets(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	token := serviceAccountToken(t)
	bad := map[string]struct {
		data map[string]string
		want string
	}{
		"bad-json": {map[string]string{"name": "a", "server": "https://a", "config": `{"bearerToken":` + token}, "config is not valid JSON"},
		"bad-base64": {map[string]string{"name": "b", "server": "https://b", "config": `{"bearerToken":"` + token + `","tlsClientConfig":{"caData":"%%%"}}`},
			"config.tlsClientConfig.caData is not base64"},
		"no-server": {map[string]string{"name": "c", "config": `{"bearerToken":"` + token + `"}`}, "server is missing"},
		"aws":       {map[string]string{"name": "d", "server": "https://d", "config": `{"awsAuthConfig":{"clusterName":"d"}}`}, "awsAuthConfig is not supported"},
	}
	for name, b := range bad {
		createSecret(t, clusterSecret(ns, name, wellknown.SecretTypeLabel, b.data))
	}
	createSecret(t, clusterSecret(ns, "good", wellknown.SecretTypeLabel, map[string]string{
		"name": "second", "server": second.Config.Host, "config": tokenConfig(t, token),
	}))
	// A Secret without the label is not a cluster, however broken.
	if _, err := management.Client.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unlabelled"},
		StringData: map[string]string{"config": "{"},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	r, changes := startRegistry(t, ns, nil)

	errs := r.Errors()
	if len(errs) != len(bad) {
		t.Fatalf("Errors() = %v, want one per bad Secret (%d)", errs, len(bad))
	}
	for _, err := range errs {
		msg := err.Error()
		if strings.Contains(msg, token) {
			t.Errorf("error leaks the token: %s", msg)
		}
		found := false
		for name, b := range bad {
			if strings.HasPrefix(msg, "cluster secret "+ns+"/"+name+": ") && strings.Contains(msg, b.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("unexpected error %q", msg)
		}
	}
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "d"}); err == nil || !strings.Contains(err.Error(), "awsAuthConfig is not supported") {
		t.Errorf("Resolve(name d) = %v, want the invalid Secret's reason", err)
	}
	good, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "second"})
	if err != nil {
		t.Fatalf("the good Secret does not resolve next to bad ones: %v", err)
	}
	if _, err := namespacesVia(t, good); err != nil {
		t.Errorf("the good cluster's credentials do not work: %v", err)
	}

	// Breaking the good Secret takes the cluster out; fixing it brings it
	// back.
	s, err := management.Client.CoreV1().Secrets(ns).Get(t.Context(), "good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.StringData = map[string]string{"config": `{"tlsClientConfig":{"certData":"!!"}}`}
	updateSecret(t, s)
	awaitChange(t, changes, second.Config.Host)
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "second"}); err == nil || !strings.Contains(err.Error(), "certData is not base64") {
		t.Errorf("Resolve of the broken Secret = %v, want its reason", err)
	}
	if s, err = management.Client.CoreV1().Secrets(ns).Get(t.Context(), "good", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	s.StringData = map[string]string{"config": tokenConfig(t, token)}
	updateSecret(t, s)
	awaitChange(t, changes, second.Config.Host)
	if _, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "second"}); err != nil {
		t.Errorf("the fixed Secret does not resolve: %v", err)
	}
}

func TestClientCertificate(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	read := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	tls := second.Config.TLSClientConfig
	cfg, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
		"caData": secondCA(t), "certData": read(tls.CertFile), "keyData": read(tls.KeyFile),
	}})
	if err != nil {
		t.Fatal(err)
	}
	createSecret(t, clusterSecret(ns, "second-admin", wellknown.SecretTypeLabel, map[string]string{
		"name": "second-admin", "server": second.Config.Host, "config": string(cfg),
	}))
	r, _ := startRegistry(t, ns, nil)
	c, err := r.Resolve(v1alpha1.ApplicationDestination{Name: "second-admin", Server: second.Config.Host})
	if err != nil {
		t.Fatal(err)
	}
	marker := onlyOnSecond(t)
	if names, err := namespacesVia(t, c); err != nil || !contains(names, marker) {
		t.Errorf("namespaces with the client certificate = %v, %v; want them to include %s", names, err, marker)
	}
}

// A registry shared by the API and a controller is started by both and
// watches once; a listener that was removed (a controller that lost its
// lease) hears nothing more, while the others still do.
func TestSharedRegistry(t *testing.T) {
	t.Parallel()
	ns := management.Namespace(t)
	server := second.Config.Host
	r, changes := startRegistry(t, ns, nil)

	leader, cancel := context.WithCancel(t.Context())
	removed := make(chan string, 100)
	remove := r.OnChange(func(server string) { removed <- server })
	if err := r.Start(leader); err != nil {
		t.Fatalf("second Start: %v", err)
	}
	remove()
	cancel() // the second user's context ends; the first's informers go on

	createSecret(t, clusterSecret(ns, "second", wellknown.SecretTypeLabel, map[string]string{
		"name": "second", "server": server, "config": tokenConfig(t, serviceAccountToken(t)),
	}))
	awaitChange(t, changes, server)
	if _, ok := r.ByServer(server); !ok {
		t.Fatalf("cluster not registered after its Secret was created; errors: %v", r.Errors())
	}
	select {
	case got := <-removed:
		t.Errorf("a removed listener heard of %s", got)
	default:
	}
}
