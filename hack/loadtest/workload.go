package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go 1.26 is not affected; serves git http-backend on loopback
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// configMapYAML is the reference object: 20 keys, ~2.3 KB; extraMeta is
// more metadata YAML (indented), if any.
func configMapYAML(i int, extraMeta string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config\n  namespace: app-%04d\n%sdata:\n", i, extraMeta)
	for k := range 20 {
		fmt.Fprintf(&b, "  key-%02d: %q\n", k, strings.Repeat(strconv.Itoa(k%10), 100))
	}
	return b.String()
}

// fiveResources is the larger workload's app: a ServiceAccount, Secret and
// ConfigMap in wave -1, a Deployment (one replica) in wave 0 and its
// Service in wave 1.
func fiveResources(i int) map[string]string {
	ns := fmt.Sprintf("app-%04d", i)
	wave := func(w int) string {
		return fmt.Sprintf("  annotations: {argocd.argoproj.io/sync-wave: %q}\n", strconv.Itoa(w))
	}
	meta := func(kind, apiVersion, name string, w int) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n", apiVersion, kind, name, ns) + wave(w)
	}
	return map[string]string{
		"cm.yaml":     configMapYAML(i, wave(-1)),
		"sa.yaml":     meta("ServiceAccount", "v1", "web", -1),
		"secret.yaml": meta("Secret", "v1", "web", -1) + "stringData: {token: not-a-real-token}\n",
		"deploy.yaml": meta("Deployment", "apps/v1", "web", 0) + `spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers: [{name: web, image: "registry.example/web:1.0", ports: [{containerPort: 8080}]}]
`,
		"svc.yaml": meta("Service", "v1", "web", 1) + "spec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: 8080}]\n",
	}
}

// serveRepo commits one directory per app and serves the repository over
// smart HTTP (git http-backend) on loopback.
func serveRepo(base string, o options) (string, func(), error) {
	work := filepath.Join(base, "repo-work")
	for i := range o.apps {
		dir := filepath.Join(work, "apps", fmt.Sprintf("app-%04d", i))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", nil, err
		}
		files := map[string]string{"cm.yaml": configMapYAML(i, "")}
		if o.resources == 5 {
			files = fiveResources(i)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
				return "", nil, err
			}
		}
	}
	if o.multiSource {
		if err := writeValues(work, o.apps, ""); err != nil {
			return "", nil, err
		}
	}
	if o.impersonate != "" {
		dir := filepath.Join(work, "canary")
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", nil, err
		}
		quota := "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: canary\nspec:\n  hard: {pods: \"1\"}\n"
		if err := os.WriteFile(filepath.Join(dir, "quota.yaml"), []byte(quota), 0o600); err != nil {
			return "", nil, err
		}
	}
	env := append(os.Environ(), "HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "apps"}, {"clone", "-q", "--bare", ".", filepath.Join(base, "git", "apps.git")}} {
		cmd := exec.Command("git", args...) //nolint:noctx // short-lived
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", nil, fmt.Errorf("git %v: %w: %s", args, err, out)
		}
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return "", nil, err
	}
	handler := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{
		"GIT_PROJECT_ROOT=" + filepath.Join(base, "git"), "GIT_HTTP_EXPORT_ALL=1", "HOME=" + base, "GIT_CONFIG_NOSYSTEM=1",
	}}
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	return "http://" + l.Addr().String() + "/apps.git", func() { _ = hs.Close() }, nil
}

// createWorkload creates the namespaces, the live ConfigMaps (as a sync
// would have left them), unrelated ConfigMaps, and the Applications.
func createWorkload(ctx context.Context, c *localcluster.Cluster, repoURL string, o options) error {
	if o.sync {
		o.apps = 0 // created later, by createApps
	}
	cs := c.Client
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "graphcd"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	// Every installation has its default project (Argo CD's too).
	projGVR := schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "appprojects"}
	proj := map[string]any{
		"apiVersion": "graphcd.io/v1alpha1", "kind": "AppProject",
		"metadata": map[string]any{"name": "default", "namespace": "graphcd"},
		"spec": map[string]any{
			"sourceRepos":              []any{"*"},
			"destinations":             []any{map[string]any{"server": "*", "namespace": "*"}},
			"clusterResourceWhitelist": []any{map[string]any{"group": "*", "kind": "*"}},
		},
	}
	if o.impersonate != "" {
		if err := impersonation(ctx, c, proj, o.impersonate); err != nil {
			return err
		}
	}
	if _, err := dyn.Resource(projGVR).Namespace("graphcd").Create(ctx, toUnstructured(proj), metav1.CreateOptions{}); err != nil {
		return err
	}
	return forEach(max(o.apps, o.unrelated), func(i int) error {
		return createOne(ctx, c, dyn, appsGVR, repoURL, i, o)
	})
}

// impersonation turns sync impersonation on in graphcd-cm and names the
// service accounts in proj: one account of the graphcd namespace
// (shared), or "deployer" of each app's namespace (per-app). A
// ClusterRole gives them what the workload creates, namespaces included
// (CreateNamespace); the per-app accounts get it through their group, as
// they live in namespaces the syncs create.
func impersonation(ctx context.Context, c *localcluster.Cluster, proj map[string]any, mode string) error {
	cs := c.Client
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "graphcd-cm", Namespace: "graphcd"},
		Data: map[string]string{"application.sync.impersonation.enabled": "true"}}
	if _, err := cs.CoreV1().ConfigMaps("graphcd").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps", "secrets", "serviceaccounts", "services"}, Verbs: []string{"*"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"*"}},
	}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	account, subject := "graphcd:loadtest-deployer", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "loadtest-deployer", Namespace: "graphcd"}
	if mode == "per-app" {
		account, subject = "deployer", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts"}
	} else if _, err := cs.CoreV1().ServiceAccounts("graphcd").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadtest-deployer"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "loadtest-deployer"},
		Subjects:   []rbacv1.Subject{subject},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	spec, _ := proj["spec"].(map[string]any)
	spec["destinationServiceAccounts"] = []any{map[string]any{"server": "*", "namespace": "*", "defaultServiceAccount": account}}
	return nil
}

// canary syncs one more app whose manifests hold a ResourceQuota, which
// the impersonated accounts may not create (graphcd itself may), and
// checks that the sync fails with the API server's refusal of a service
// account.
func canary(ctx context.Context, c *localcluster.Cluster, repoURL string) error {
	dyn := dynamic.NewForConfigOrDie(c.Config)
	app := application(repoURL, 0, true)
	app["metadata"] = map[string]any{"name": "canary", "namespace": "graphcd"}
	spec, _ := app["spec"].(map[string]any)
	spec["source"] = map[string]any{"repoURL": repoURL, "path": "canary", "targetRevision": "main"}
	spec["destination"] = map[string]any{"server": "https://kubernetes.default.svc", "namespace": "canary"}
	if _, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(app), metav1.CreateOptions{}); err != nil {
		return err
	}
	for {
		a, err := dyn.Resource(appsGVR).Namespace("graphcd").Get(ctx, "canary", metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase, _, _ := unstructuredString(a.Object, "status", "operationState", "phase")
		if phase == "Failed" || phase == "Succeeded" || phase == "Error" {
			results, _, _ := unstructured.NestedSlice(a.Object, "status", "operationState", "syncResult", "resources")
			for _, r := range results {
				if msg, _, _ := unstructuredString(r.(map[string]any), "message"); strings.Contains(msg, `User "system:serviceaccount:`) {
					return nil
				}
			}
			return fmt.Errorf("the canary sync ended %s without a service account's refusal: impersonation did not apply", phase)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// forEach calls fn for 0..n-1 from 16 goroutines and returns the first
// error; after an error the remaining calls are skipped.
func forEach(n int, fn func(i int) error) error {
	work := make(chan int)
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		bad   atomic.Bool
	)
	for range 16 {
		wg.Go(func() {
			for i := range work {
				if bad.Load() {
					continue
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
					bad.Store(true)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	return first
}

// createApps creates the Applications of --sync: automated sync with
// prune and self-heal, CreateNamespace, nothing live beforehand.
func createApps(ctx context.Context, c *localcluster.Cluster, repoURL string, o options) error {
	dyn := dynamic.NewForConfigOrDie(c.Config)
	return forEach(o.apps, func(i int) error {
		app := application(repoURL, i, true)
		if o.notify {
			subscribe(app, i)
		}
		if o.multiSource {
			spec := app["spec"].(map[string]any)
			delete(spec, "source")
			spec["sources"] = multiSourceSpec(o.chartsURL, repoURL, fmt.Sprintf("app-%04d", i))
		}
		_, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(app), metav1.CreateOptions{})
		return err
	})
}

// appsGVR is graphcd's Applications.
var appsGVR = schema.GroupVersionResource{Group: v1alpha1.GroupVersion.Group, Version: v1alpha1.GroupVersion.Version, Resource: "applications"}

// application is app i of the workload, automated when auto.
func application(repoURL string, i int, auto bool) map[string]any {
	ns := fmt.Sprintf("app-%04d", i)
	spec := map[string]any{
		"project":     "default",
		"source":      map[string]any{"repoURL": repoURL, "path": "apps/" + ns, "targetRevision": "main"},
		"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": ns},
	}
	if auto {
		spec["syncPolicy"] = map[string]any{
			"automated":   map[string]any{"prune": true, "selfHeal": true},
			"syncOptions": []any{"CreateNamespace=true"},
		}
	}
	return map[string]any{
		"apiVersion": "graphcd.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": ns, "namespace": "graphcd"},
		"spec":     spec,
	}
}

func createOne(ctx context.Context, c *localcluster.Cluster, dyn dynamic.Interface, appsGVR schema.GroupVersionResource, repoURL string, i int, o options) error {
	cs := c.Client
	if i < o.apps {
		ns := fmt.Sprintf("app-%04d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "config", Namespace: ns}, Data: map[string]string{}}
		cache.Tracking{}.Mark(cm, schema.GroupKind{Kind: "ConfigMap"}, ns, ns)
		for k := range 20 {
			cm.Data[fmt.Sprintf("key-%02d", k)] = strings.Repeat(strconv.Itoa(k%10), 100)
		}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := dyn.Resource(appsGVR).Namespace("graphcd").Create(ctx, toUnstructured(application(repoURL, i, false)), metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if i < o.unrelated {
		ns := fmt.Sprintf("noise-%02d", i%50)
		if i < 50 {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				return err
			}
		} else {
			time.Sleep(time.Millisecond) // let the namespace exist
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-%05d", i), Namespace: ns}, Data: map[string]string{"k": strings.Repeat("x", 2000)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func toUnstructured(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

// serviceAccountKubeconfig makes ServiceAccount graphcd/graphcd-server
// with cluster-admin (which holds impersonate) and writes a kubeconfig
// with a token of it, for graphcd to run as an install runs it.
func serviceAccountKubeconfig(ctx context.Context, c *localcluster.Cluster) (string, error) {
	const ns, name = "graphcd", "graphcd-server"
	cs := c.Client
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadtest-graphcd-server"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	hours := int64(24 * 3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hours}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of %s/%s: %w", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthority: c.Config.CAFile, CertificateAuthorityData: c.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name}
	cfg.CurrentContext = "local"
	path := filepath.Join(c.Dir, "graphcd-server.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, nil
}
