package secretops

import (
	"errors"
	"testing"

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
