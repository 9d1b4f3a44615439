//go:build integration

package resolvers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// A project role that may create its own project's clusters can neither
// make the cluster graphcd runs in its own (a global cluster, though no
// Secret declares it) nor register a server under a name another cluster
// has. A cluster it may not see is refused as a new one would be, without
// naming its project, and removing it is not found. Nothing is written.
func TestProjectRoleCannotClaimOtherClusters(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	team, other, api := projectAdmins(t, ns, "clusters")
	const add = `mutation($in: ClusterInput!) { addCluster(input: $in) { server } }`
	const inCluster = secretcodec.InClusterServer
	globalServer, otherServer, shadowServer := "https://g-"+ns+".example.com", "https://o-"+ns+".example.com", "https://s-"+ns+".example.com"
	globalName, otherName := "g-"+ns, "o-"+ns
	for _, in := range []map[string]any{
		{"name": globalName, "server": globalServer, "bearerToken": "admin-g"},
		{"name": otherName, "server": otherServer, "project": other, "bearerToken": "admin-o"},
	} {
		if _, errs := ask(t, api, "admin-token", add, map[string]any{"in": in}); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	servers := []string{inCluster, globalServer, otherServer, shadowServer}
	t.Cleanup(func() { deleteClusterSecrets(t, globalServer, otherServer, shadowServer) })
	before := clusterSecrets(t, servers...)

	input := func(name, server string, upsert bool) map[string]any {
		return map[string]any{"in": map[string]any{"name": name, "server": server, "project": team, "bearerToken": "team", "upsert": upsert}}
	}
	for _, tt := range []struct {
		what          string
		vars          map[string]any
		code, message string
	}{
		{"in-cluster as the team's", input("in-cluster", inCluster, false), "FORBIDDEN", "permission denied: clusters create " + team + "/" + inCluster},
		{"in-cluster as the team's, upserted", input("in-cluster", inCluster, true), "FORBIDDEN", "permission denied: clusters update " + team + "/" + inCluster},
		{"in-cluster renamed as the team's", input("mine-"+ns, inCluster, true), "FORBIDDEN", "permission denied: clusters update " + team + "/" + inCluster},
		{"a server named in-cluster", input("in-cluster", shadowServer, false), "CONFLICT", "the name is used by another cluster"},
		{"a server named as a global cluster", input(globalName, shadowServer, false), "CONFLICT", "the name is used by another cluster"},
		{"a server named as another project's cluster", input(otherName, shadowServer, true), "CONFLICT", "the name is used by another cluster"},
		{"another project's cluster", input(otherName, otherServer, false), "FORBIDDEN", "permission denied: clusters create " + team + "/" + otherServer},
		{"another project's cluster, upserted", input(otherName, otherServer, true), "FORBIDDEN", "permission denied: clusters update " + team + "/" + otherServer},
		{"a global cluster, upserted", input(globalName, globalServer, true), "FORBIDDEN", "permission denied: clusters update " + team + "/" + globalServer},
	} {
		_, errs := ask(t, api, "team-token", add, tt.vars)
		if codeOf(errs) != tt.code || !strings.HasSuffix(errs[0].Message, tt.message) {
			t.Errorf("%s: %+v, want %s %q", tt.what, errs, tt.code, tt.message)
		} else if strings.Contains(errs[0].Message, other) {
			t.Errorf("%s: %q names the project of the cluster", tt.what, errs[0].Message)
		}
	}
	const remove = `mutation($s: String!) { removeCluster(server: $s) }`
	for _, server := range []string{inCluster, globalServer, otherServer} {
		if _, errs := ask(t, api, "team-token", remove, map[string]any{"s": server}); codeOf(errs) != "NOT_FOUND" {
			t.Errorf("the team removing %s: %+v, want NOT_FOUND", server, errs)
		}
	}
	if diff := cmp.Diff(clusterSecrets(t, servers...), before); diff != "" {
		t.Errorf("cluster Secrets changed (-got +want):\n%s", diff)
	}
}

// The API checks a destination named by an application against the
// cluster the controller would use: of two Secrets written around the API
// that claim one name, the newer one.
func TestDestinationNameResolvedLikeTheController(t *testing.T) {
	t.Parallel()
	ns := cluster.Namespace(t)
	team, other := "team-"+ns, "other-"+ns
	for _, name := range []string{team, other} {
		proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.AppProjectSpec{
			SourceRepos: []string{"*"}, Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		}}
		if err := kube.Create(t.Context(), proj); err != nil {
			t.Fatal(err)
		}
	}
	setPolicy(t, ns, "")
	api := authAPI(t, ns, tokenTable{"admin-token": {Subject: "admin"}}, nil)
	name := "dup-" + ns
	// The team's server sorts first in the list, the other project's
	// Secret is the newer one (by creation time, then by Secret name).
	older, newer := "https://dup-a-"+ns+".example.com", "https://dup-z-"+ns+".example.com"
	t.Cleanup(func() { deleteClusterSecrets(t, older, newer) })
	for i, c := range []secretcodec.Cluster{
		{Name: name, Server: older, Project: team, Config: secretcodec.ClusterConfig{BearerToken: "t"}},
		{Name: name, Server: newer, Project: other, Config: secretcodec.ClusterConfig{BearerToken: "t"}},
	} {
		data, err := c.Data()
		if err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("cluster-dup-%d-%s", i, ns), Labels: map[string]string{wellknown.SecretTypeLabel: secretcodec.TypeCluster},
		}, StringData: data}
		if _, err := cluster.Client.CoreV1().Secrets(secretsNS).Create(t.Context(), sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "both clusters registered", func() error {
		raw, _ := ask(t, api, "admin-token", `{ clusters(first: 500) { nodes { server } } }`, nil)
		if !strings.Contains(string(raw), older) || !strings.Contains(string(raw), newer) {
			return errNotYet
		}
		return nil
	})
	m := strings.NewReplacer("project: default", "project: "+team, `server: "https://kubernetes.default.svc"`, "name: "+name).
		Replace(manifest(ns, "a1", "graphcd.io/v1alpha1", ""))
	_, errs := ask(t, api, "admin-token", createMutation, map[string]any{"m": m, "upsert": false})
	if want := "the cluster is scoped to another project"; codeOf(errs) != "BAD_USER_INPUT" || !strings.Contains(errs[0].Message, want) || strings.Contains(errs[0].Message, other) {
		t.Errorf("an app of %s on %s: %+v, want BAD_USER_INPUT saying %q without naming %s", team, name, errs, want, other)
	}
}

// clusterSecrets returns the name and resource version of every cluster
// Secret that claims one of servers.
func clusterSecrets(t *testing.T, servers ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, sec := range claimingSecrets(t, servers...) {
		out[sec.Name] = sec.ResourceVersion
	}
	return out
}

// deleteClusterSecrets deletes the cluster Secrets that claim servers.
func deleteClusterSecrets(t *testing.T, servers ...string) {
	t.Helper()
	for _, sec := range claimingSecrets(t, servers...) {
		if err := cluster.Client.CoreV1().Secrets(secretsNS).Delete(context.Background(), sec.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}
}

// claimingSecrets returns the cluster Secrets that claim one of servers.
func claimingSecrets(t *testing.T, servers ...string) []corev1.Secret {
	t.Helper()
	list, err := cluster.Client.CoreV1().Secrets(secretsNS).List(context.Background(), metav1.ListOptions{LabelSelector: wellknown.SecretTypeLabel + "=" + secretcodec.TypeCluster})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Secret
	for _, sec := range list.Items {
		c, _ := secretcodec.DecodeCluster(&sec)
		for _, s := range servers {
			if secretcodec.NormaliseServer(c.Server) == secretcodec.NormaliseServer(s) {
				out = append(out, sec)
			}
		}
	}
	return out
}
