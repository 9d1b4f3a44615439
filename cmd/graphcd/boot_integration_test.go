//go:build integration

package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file's name sorts before every other integration test file of the
// package, and Go runs a package's tests in file order: the test below
// needs a cluster where no test has installed graphcd's CRDs yet. Name new
// test files so that they sort after it (TestBootFileSortsFirst checks).

// The real binary against a real API server: /readyz is 503 until the CRDs
// are established, turns 200 once `graphcd install crds` ran, `{ version }`
// answers over HTTP, and SIGTERM ends the process cleanly.
func TestServerAgainstCluster(t *testing.T) {
	bin := buildBinary(t)
	cmd := exec.CommandContext(t.Context(), bin, "server", "--insecure", "--listen", "127.0.0.1:0", "--log-format", "text")
	cmd.Env = append(binaryEnv(), "GRAPHCD_KUBECONFIG="+cluster.Kubeconfig)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	logs := &syncBuffer{}
	lines := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`msg="serving HTTP" addr=(\S+)`)
	var addr string
	for addr == "" && lines.Scan() {
		logs.WriteString(lines.Text() + "\n")
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("server did not report its address; logs:\n%s", logs)
	}
	drained := make(chan struct{})
	go func() {
		for lines.Scan() {
			logs.WriteString(lines.Text() + "\n")
		}
		close(drained)
	}()
	base := "http://" + addr

	if code, body := get(t, base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "not established") {
		t.Errorf("/readyz before CRDs = %d %q, want 503 naming the missing CRD", code, body)
	}

	install := exec.CommandContext(t.Context(), bin, "install", "crds", "--kubeconfig", cluster.Kubeconfig)
	install.Env = binaryEnv()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("graphcd install crds: %v\n%s", err, out)
	} else if !strings.Contains(string(out), "applications.graphcd.io established") {
		t.Errorf("graphcd install crds printed %q, want a line per established CRD", out)
	}

	deadline := time.Now().Add(time.Minute)
	for {
		code, body := get(t, base+"/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still %d %q a minute after the CRDs were installed", code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	resp, err := http.Post(base+"/api/graphql", "application/json", strings.NewReader(`{"query":"{ version { version commit goVersion } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Data struct {
			Version struct{ Version, Commit, GoVersion string }
		}
		Errors []any
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	_ = resp.Body.Close()
	if err != nil || len(got.Errors) > 0 {
		t.Fatalf("{ version }: decode err %v, errors %v", err, got.Errors)
	}
	if v := got.Data.Version; v.Version != testVersion || v.Commit != testCommit || v.GoVersion != runtime.Version() {
		t.Errorf("{ version } = %+v, want %s commit %s on %s", v, testVersion, testCommit, runtime.Version())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Errorf("graphcd server after SIGTERM: %v, want exit 0; logs:\n%s", err, logs)
	}
	for _, want := range []string{"connected to Kubernetes API", "HTTP server stopped"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}
}

// TestServerAgainstCluster relies on running first: no integration test
// file of the package may sort before this one.
func TestBootFileSortsFirst(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries { // sorted by name
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(b), "//go:build integration") {
			continue
		}
		if e.Name() != "boot_integration_test.go" {
			t.Errorf("%s sorts before boot_integration_test.go: rename it so that TestServerAgainstCluster runs first", e.Name())
		}
		return
	}
}
