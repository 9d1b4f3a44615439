package secretops

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/internal/wellknown"
)

func TestValidate(t *testing.T) {
	repos := []struct {
		r  Repository
		ok bool
	}{
		{Repository{URL: "https://git.example.com/a.git"}, true},
		{Repository{URL: "git@github.com:org/repo.git"}, true},
		{Repository{URL: "ssh://git@git.example.com/a.git"}, true},
		{Repository{URL: "registry.example.com/charts", Type: "helm", EnableOCI: true}, true},
		{Repository{URL: ""}, false},
		{Repository{URL: "https://bob:pw@git.example.com/a"}, false},
		{Repository{URL: "ftp://git.example.com/a"}, false},
		{Repository{URL: "https://git.example.com/a", Type: "svn"}, false},
		{Repository{URL: "https://git.example.com/a", Username: "bob"}, false},
		{Repository{URL: "not a url"}, false},
		{Repository{URL: "https://git.example.com/a", Project: "team-a"}, true},
		{Repository{URL: "https://git.example.com/a", Project: "team/a"}, false},
		{Repository{URL: "https://git.example.com/a", Project: "Team A"}, false},
	}
	for _, tt := range repos {
		if err := tt.r.Validate(); (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.r, err, tt.ok)
		}
	}
	clusters := []struct {
		c  Cluster
		ok bool
	}{
		{Cluster{Name: "prod", Server: "https://prod.example.com:6443"}, true},
		{Cluster{Server: "https://prod.example.com"}, false},
		{Cluster{Name: "prod", Server: "prod.example.com"}, false},
		{Cluster{Name: "prod", Server: "https://admin:pw@prod.example.com"}, false},
		{Cluster{Name: "prod", Server: "https://prod.example.com", Labels: map[string]string{wellknown.SecretTypeLabel: "x"}}, false},
		{Cluster{Name: "prod", Server: "https://prod.example.com", Project: "team-a"}, true},
		{Cluster{Name: "prod", Server: "https://prod.example.com", Project: "team-a/*"}, false},
	}
	for _, tt := range clusters {
		if err := tt.c.Validate(); (err == nil) != tt.ok {
			t.Errorf("Validate(%+v) = %v, want ok=%v", tt.c, err, tt.ok)
		}
	}
}

func TestClaims(t *testing.T) {
	secret := func(name, server, clusterName string, created int64) corev1.Secret {
		return corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.Unix(created, 0)},
			Data:       map[string][]byte{"server": []byte(server), "name": []byte(clusterName)},
		}
	}
	all := []corev1.Secret{
		secret("b-newer", "https://a.example.com/", "a", 20),
		secret("a-older", "https://a.example.com", "a", 10),
		secret("c-tie", "https://a.example.com", "a", 20),
		secret("other", "https://b.example.com", "bee", 5),
	}
	for _, tt := range []struct {
		what, server, name string
		claimants          []string
		nameTaken          bool
	}{
		{"the server's Secrets, the registry's choice last", "https://a.example.com", "a", []string{"a-older", "b-newer", "c-tie"}, false},
		{"another cluster's name", "https://c.example.com", "bee", nil, true},
		{"a name of the server's own", "https://a.example.com", "renamed", []string{"a-older", "b-newer", "c-tie"}, false},
		{"the built-in name for another server", "https://c.example.com", secretcodec.InClusterName, nil, true},
		{"the built-in name for in-cluster", "https://kubernetes.default.svc", secretcodec.InClusterName, nil, false},
		{"a new name", "https://c.example.com", "sea", nil, false},
	} {
		claimants, nameTaken := claims(all, tt.server, tt.name)
		var got []string
		for _, sec := range claimants {
			got = append(got, sec.Name)
		}
		if !slices.Equal(got, tt.claimants) || nameTaken != tt.nameTaken {
			t.Errorf("%s: claims = %v, %v; want %v, %v", tt.what, got, nameTaken, tt.claimants, tt.nameTaken)
		}
	}
}
