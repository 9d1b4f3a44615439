package secretcodec

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/wellknown"
)

func secret(typ string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "s", Labels: map[string]string{wellknown.ArgoSecretTypeLabel: typ}},
		StringData: data,
	}
}

// What secretops writes, the readers read back unchanged.
func TestRoundTrip(t *testing.T) {
	repo := Repository{
		URL: "https://github.com/org/private", Name: "private", Project: "team", Type: RepoTypeHelm,
		Username: "bot", Password: "s3cret", SSHPrivateKey: "key", TLSClientCertData: "cert", TLSClientCertKey: "tlskey",
		Insecure: true, EnableOCI: true, Template: true,
	}
	got, err := DecodeRepository(secret(repo.Label(), repo.Data()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, repo); diff != "" {
		t.Errorf("repository (-got +want):\n%s", diff)
	}

	shard := 2
	cluster := Cluster{
		Name: "prod", Server: "https://prod.example.com:6443", Namespaces: []string{"a", "b"}, ClusterResources: true, Project: "team",
		Config: ClusterConfig{BearerToken: "tok", TLSClientConfig: TLSClientConfig{ServerName: "prod", CAData: "Y2E="}},
	}
	data, err := cluster.Data()
	if err != nil {
		t.Fatal(err)
	}
	data["shard"] = "2"
	cluster.Shard = &shard
	gotCluster, err := DecodeCluster(secret(TypeCluster, data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(gotCluster, cluster); diff != "" {
		t.Errorf("cluster (-got +want):\n%s", diff)
	}
}

// A broken Secret still says which repository or cluster it claims, and
// its error repeats no credential.
func TestDecodeErrors(t *testing.T) {
	r, err := DecodeRepository(secret(TypeRepository, map[string]string{"url": "https://bot:hunter2@git.example.com/r", "name": "r"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") || r.URL != "https://git.example.com/r" || r.Name != "r" {
		t.Errorf("DecodeRepository = %+v, %v", r, err)
	}
	c, err := DecodeCluster(secret(TypeCluster, map[string]string{"server": "https://prod/", "config": `{"bearerToken": 42}`}))
	if err == nil || c.Server != "https://prod" || c.Name != "https://prod" {
		t.Errorf("DecodeCluster = %+v, %v", c, err)
	}
	if _, err := DecodeCluster(secret(TypeCluster, map[string]string{"server": "https://u:hunter2@prod"})); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("DecodeCluster error = %v", err)
	}
}

func TestType(t *testing.T) {
	sec := secret(TypeRepository, nil)
	sec.Labels[wellknown.SecretTypeLabel] = TypeRepoCreds
	if got := Type(sec); got != TypeRepoCreds {
		t.Errorf("Type = %q, want graphcd's label to win", got)
	}
}

// A write Secret and a write template read back as what they were, under
// their own secret types.
func TestRoundTripWrite(t *testing.T) {
	for _, tc := range []struct {
		template bool
		label    string
	}{{false, TypeRepositoryWrite}, {true, TypeRepoWriteCreds}} {
		repo := Repository{URL: "https://github.com/org/deploy", Type: RepoTypeGit, Username: "bot", Password: "push-token", Write: true, Template: tc.template}
		if got := repo.Label(); got != tc.label {
			t.Errorf("Label() = %q, want %q", got, tc.label)
		}
		got, err := DecodeRepository(secret(repo.Label(), repo.Data()))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, repo); diff != "" {
			t.Errorf("%s (-got +want):\n%s", tc.label, diff)
		}
	}
}
