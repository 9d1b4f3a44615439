//go:build integration

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/internal/testenv/localredis"
)

// The real server with its controller, sharing status through a real
// Redis: `graphcd cluster get` shows in-cluster Successful with its
// version and cache, and componentStatus lists this API replica, the
// controller leading shard 0 with in-cluster's cache, Redis with its
// version, and the in-process repository server — for the admin only.
func TestCLIClusterGetAndComponentStatus(t *testing.T) {
	rs, err := localredis.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Stop() })
	secretFile := filepath.Join(t.TempDir(), "redis-secret")
	if err := os.WriteFile(secretFile, []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startAuthServer(t, "--controller", "--redis", rs.Addr, "--redis-password", rs.Password, "--redis-secret-file", secretFile)
	home := t.TempDir()
	secret, err := cluster.Client.CoreV1().Secrets(s.namespace).Get(t.Context(), "graphcd-initial-admin-secret", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := s.runCLIBinary(t, home, string(secret.Data["password"])+"\n", nil, "login", s.base, "--username", "admin", "--password-stdin"); r.code != 0 {
		t.Fatalf("login: %d %s", r.code, r.stderr)
	}

	var got struct {
		Name, Server string
		Info         *struct {
			ServerVersion   string
			ConnectionState struct{ Status, Message string }
			CacheInfo       struct{ ResourcesCount, ApisCount int }
			Shard           int
		}
	}
	poll(t, "cluster get in-cluster to show it Successful", func() (bool, string) {
		r := s.runCLIBinary(t, home, "", nil, "cluster", "get", "in-cluster", "-o", "json")
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil {
			return false, r.stdout + r.stderr
		}
		return got.Info != nil && got.Info.ConnectionState.Status == "SUCCESSFUL", r.stdout
	})
	if got.Server != "https://kubernetes.default.svc" || !strings.HasPrefix(got.Info.ServerVersion, "v1.") ||
		got.Info.CacheInfo.ResourcesCount == 0 || got.Info.CacheInfo.ApisCount == 0 || got.Info.ConnectionState.Message != "" {
		t.Errorf("cluster get in-cluster -o json: %+v %+v", got, *got.Info)
	}
	r := s.runCLIBinary(t, home, "", nil, "cluster", "get", "https://kubernetes.default.svc")
	for _, want := range []string{"Name:", "in-cluster", "Connection:", "Successful", "Server version:", got.Info.ServerVersion, "Resources cached:", "Last cache sync:"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("cluster get (table) = %d %q, want %q in it", r.code, r.stdout, want)
		}
	}
	if r := s.runCLIBinary(t, home, "", nil, "cluster", "get", "nowhere"); r.code == 0 || !strings.Contains(r.stderr, "NOT_FOUND") {
		t.Errorf("cluster get nowhere = %d %q, want a NOT_FOUND failure", r.code, r.stderr)
	}

	creds, _ := json.Marshal(map[string]string{"username": "admin", "password": string(secret.Data["password"])})
	code, body := s.login(t, "application/json", string(creds))
	var login struct{ Token string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &login) != nil {
		t.Fatalf("admin login: %d %s", code, body)
	}
	const q = `{ componentStatus { apiReplicas { id version lastSeen } controllers { id shard leader clusters }
		repoServer { name reachable } redis { address reachable version usedMemoryBytes } dex { reachable } } }`
	var status struct {
		Data struct {
			ComponentStatus struct {
				APIReplicas []struct{ ID, Version string }
				Controllers []struct {
					ID       string
					Shard    int
					Leader   bool
					Clusters []string
				}
				RepoServer struct {
					Name      string
					Reachable bool
				}
				Redis *struct {
					Address, Version string
					Reachable        bool
					UsedMemoryBytes  float64
				}
				Dex *struct{ Reachable bool }
			}
		}
	}
	var last string
	poll(t, "componentStatus to list the API replica and the leading controller", func() (bool, string) {
		code, body := s.gql(t, http.DefaultClient, login.Token, q)
		last = body
		if code != http.StatusOK || json.Unmarshal([]byte(body), &status) != nil {
			return false, body
		}
		cs := status.Data.ComponentStatus
		return len(cs.APIReplicas) == 1 && len(cs.Controllers) == 1 && len(cs.Controllers[0].Clusters) > 0, body
	})
	cs := status.Data.ComponentStatus
	if c := cs.Controllers[0]; !c.Leader || c.Shard != 0 || c.Clusters[0] != "https://kubernetes.default.svc" {
		t.Errorf("controller: %+v, want shard 0's leader with in-cluster's cache", c)
	}
	if cs.APIReplicas[0].ID == "" || cs.APIReplicas[0].Version == "" {
		t.Errorf("API replica: %+v", cs.APIReplicas[0])
	}
	if cs.Redis == nil || !cs.Redis.Reachable || cs.Redis.Address != rs.Addr || cs.Redis.Version == "" || cs.Redis.UsedMemoryBytes <= 0 {
		t.Errorf("redis: %+v, want %s reachable with its version and memory", cs.Redis, rs.Addr)
	}
	if !cs.RepoServer.Reachable || cs.RepoServer.Name != "in process" {
		t.Errorf("repo server: %+v", cs.RepoServer)
	}
	if cs.Dex == nil || !cs.Dex.Reachable {
		t.Errorf("dex: %+v, want the embedded Dex reachable", cs.Dex)
	}
	if strings.Contains(last, rs.Password) {
		t.Error("componentStatus shows the Redis password")
	}

	// Not for everyone: a caller without `clusters, update, *` is refused.
	if code, body := s.gql(t, http.DefaultClient, "", q); code != http.StatusOK || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Errorf("componentStatus without a session = %d %s, want UNAUTHENTICATED", code, body)
	}
}
