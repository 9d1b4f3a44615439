//go:build integration

package repocreds_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/testenv/localcluster"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

var cluster *localcluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(localcluster.RunMain(m, localcluster.Options{Mode: localcluster.Minimal}, &cluster))
}

func create(t *testing.T, objs ...any) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Secret:
			_, err = cluster.Client.CoreV1().Secrets(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cluster.Client.CoreV1().ConfigMaps(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func secret(ns, name, label, typ string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{label: typ}},
		StringData: data,
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	create(t,
		secret(ns, "exact", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/app.git", "username": "bot", "password": "pw-exact",
		}),
		secret(ns, "org-template", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com/org", "username": "org-bot", "password": "pw-org",
		}),
		secret(ns, "broad-template", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com", "bearerToken": "tok-broad",
		}),
		// Argo CD's label works too; this repository has no credentials of
		// its own and inherits the template's.
		secret(ns, "argo-style", wellknown.ArgoSecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/other", "insecure": "true",
		}),
		secret(ns, "charts", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://charts.example.com", "type": "helm", "enableOCI": "true",
		}),
		// An OCI repository as Argo CD writes one: the scheme may be left out.
		secret(ns, "artifacts", wellknown.ArgoSecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "registry.example.com/team/app", "type": "oci", "username": "puller", "password": "pw-oci", "insecureOCIForceHttp": "true",
		}),
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: repocreds.TLSCertsConfigMap, Namespace: ns},
			Data: map[string]string{"git.example.com": "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: repocreds.KnownHostsConfigMap, Namespace: ns},
			Data: map[string]string{"ssh_known_hosts": "git.example.com ssh-ed25519 AAAA\n"}},
	)
	store := repocreds.New(cluster.Client, ns)
	ca := []byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")
	for _, tc := range []struct {
		url  string
		want reposerver.Repository
	}{
		{"https://GIT.example.com/org/app", reposerver.Repository{Type: reposerver.RepoTypeGit, Credentials: &git.Credentials{Username: "bot", Password: "pw-exact", CACert: ca}}},
		{"https://git.example.com/org/lib.git", reposerver.Repository{Type: reposerver.RepoTypeGit, Credentials: &git.Credentials{Username: "org-bot", Password: "pw-org", CACert: ca}}},
		{"https://git.example.com/other-org/x", reposerver.Repository{Type: reposerver.RepoTypeGit, Credentials: &git.Credentials{BearerToken: "tok-broad", CACert: ca}}},
		{"https://git.example.com/org/other", reposerver.Repository{Type: reposerver.RepoTypeGit, Credentials: &git.Credentials{Username: "org-bot", Password: "pw-org", CACert: ca, Insecure: true}}},
		{"https://charts.example.com", reposerver.Repository{Type: reposerver.RepoTypeHelm, EnableOCI: true}},
		{"oci://registry.example.com/team/app", reposerver.Repository{Type: reposerver.RepoTypeOCI, InsecureOCIForceHTTP: true, Credentials: &git.Credentials{Username: "puller", Password: "pw-oci"}}},
		{"oci://registry.example.com/team/other", reposerver.Repository{}},
		{"git@git.example.com:org/ssh-only.git", reposerver.Repository{Credentials: &git.Credentials{SSHKnownHosts: []byte("git.example.com ssh-ed25519 AAAA\n")}}},
		{"https://elsewhere.example.org/x", reposerver.Repository{}},
	} {
		got, err := store.Lookup(t.Context(), tc.url, "")
		if err != nil {
			t.Fatalf("Lookup(%s): %v", tc.url, err)
		}
		tc.want.URL = tc.url
		if diff := cmp.Diff(got, tc.want); diff != "" {
			t.Errorf("Lookup(%s) (-got +want):\n%s", tc.url, diff)
		}
	}

	infos, err := store.List(t.Context())
	if err != nil || len(infos) != 6 {
		t.Fatalf("List = %d entries, %v; want 6", len(infos), err)
	}
	if s := strings.Join([]string{infos[0].URL, infos[0].Name}, " "); strings.Contains(s, "pw-") {
		t.Errorf("List leaks a password: %s", s)
	}
}

// A malformed Secret is reported by name, never with its values, to the
// lookups of its own repository only; the others and the list go on.
func TestLookupBadSecret(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	create(t,
		secret(ns, "broken", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://bot:hunter2@git.example.com/org/app",
		}),
		secret(ns, "broken-template", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com/team", "type": "svn",
		}),
		secret(ns, "no-url", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{"password": "hunter3"}),
		secret(ns, "good", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/good", "username": "bot", "password": "pw-good",
		}),
	)
	store := repocreds.New(cluster.Client, ns)
	for url, want := range map[string]string{
		"https://git.example.com/org/app":      "repository secret " + ns + "/broken: url must not embed credentials",
		"https://git.example.com/team/service": "repository secret " + ns + "/broken-template: type \"svn\": want git, helm or oci",
	} {
		_, err := store.Lookup(t.Context(), url, "")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter") {
			t.Errorf("Lookup(%s): error = %v; want one containing %q, without a password", url, err, want)
		}
	}
	repo, err := store.Lookup(t.Context(), "https://git.example.com/org/good", "")
	if err != nil || repo.Credentials == nil || repo.Credentials.Password != "pw-good" {
		t.Errorf("Lookup(good) = %+v, %v; want its credentials despite the broken Secrets", repo, err)
	}
	infos, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, i := range infos {
		urls = append(urls, i.URL)
		if strings.Contains(i.URL+i.Name, "hunter") {
			t.Errorf("List leaks a password: %+v", i)
		}
	}
	if want := []string{"", "https://git.example.com/org/app", "https://git.example.com/org/good", "https://git.example.com/team"}; !slices.Equal(urls, want) {
		t.Errorf("List URLs = %q, want %q", urls, want)
	}
}

// A Secret with a project serves only that project's applications, and
// for them wins over one without; another project's Secret is as if absent:
// its credentials never serve, and a malformed one fails no lookup.
func TestLookupProjectScoped(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	const app = "https://git.example.com/org/app.git"
	create(t,
		secret(ns, "app-global", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": app, "username": "global-bot", "password": "pw-global",
		}),
		secret(ns, "app-team-a", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": app, "project": "team-a", "username": "a-bot", "password": "pw-team-a",
		}),
		// Only team-b has credentials for this one.
		secret(ns, "lib-team-b", wellknown.ArgoSecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/lib", "project": "team-b", "username": "b-bot", "password": "pw-team-b",
		}),
		// A broken Secret of team-b claims the repository "broken".
		secret(ns, "broken-team-b", wellknown.SecretTypeLabel, secretcodec.TypeRepository, map[string]string{
			"url": "https://git.example.com/org/broken", "project": "team-b", "type": "svn", "password": "hunter2",
		}),
		// Templates: a global one for the host, team-a's for the same
		// prefix (it wins the tie for team-a), team-b's for a longer one.
		secret(ns, "host-global", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com/", "bearerToken": "tok-global",
		}),
		secret(ns, "host-team-a", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com/", "project": "team-a", "bearerToken": "tok-team-a",
		}),
		secret(ns, "tools-team-b", wellknown.SecretTypeLabel, secretcodec.TypeRepoCreds, map[string]string{
			"url": "https://git.example.com/tools", "project": "team-b", "bearerToken": "tok-team-b",
		}),
	)
	store := repocreds.New(cluster.Client, ns)
	for _, tc := range []struct {
		url, project string
		want         *git.Credentials
	}{
		{app, "team-a", &git.Credentials{Username: "a-bot", Password: "pw-team-a"}},
		{app, "team-b", &git.Credentials{Username: "global-bot", Password: "pw-global"}},
		{app, "", &git.Credentials{Username: "global-bot", Password: "pw-global"}},
		// team-b's repository is not there for team-a: the templates serve.
		{"https://git.example.com/org/lib", "team-b", &git.Credentials{Username: "b-bot", Password: "pw-team-b"}},
		{"https://git.example.com/org/lib", "team-a", &git.Credentials{BearerToken: "tok-team-a"}},
		{"https://git.example.com/org/lib", "default", &git.Credentials{BearerToken: "tok-global"}},
		// team-b's broken Secret fails only team-b's lookups.
		{"https://git.example.com/org/broken", "team-a", &git.Credentials{BearerToken: "tok-team-a"}},
		{"https://git.example.com/tools/x", "team-b", &git.Credentials{BearerToken: "tok-team-b"}},
		{"https://git.example.com/tools/x", "team-c", &git.Credentials{BearerToken: "tok-global"}},
		{"https://elsewhere.example.org/x", "team-b", nil},
	} {
		got, err := store.Lookup(t.Context(), tc.url, tc.project)
		if err != nil {
			t.Fatalf("Lookup(%s, %s): %v", tc.url, tc.project, err)
		}
		if diff := cmp.Diff(got.Credentials, tc.want); diff != "" {
			t.Errorf("Lookup(%s, %s) credentials (-got +want):\n%s", tc.url, tc.project, diff)
		}
	}
	_, err := store.Lookup(t.Context(), "https://git.example.com/org/broken", "team-b")
	if want := "repository secret " + ns + "/broken-team-b: type \"svn\""; err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Lookup(broken, team-b): error = %v; want one containing %q, without the password", err, want)
	}

	infos, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range infos {
		got = append(got, i.Project+" "+i.URL)
	}
	slices.Sort(got)
	want := []string{
		" https://git.example.com/", " https://git.example.com/org/app.git",
		"team-a https://git.example.com/", "team-a https://git.example.com/org/app.git",
		"team-b https://git.example.com/org/broken", "team-b https://git.example.com/org/lib", "team-b https://git.example.com/tools",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("List (project URL) (-got +want):\n%s", diff)
	}
}
