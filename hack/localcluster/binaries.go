package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Pinned versions of the control-plane binaries. They must match
// hack/cluster-bins.sh, which builds them; TestPinsMatchScript keeps the two
// in step.
const (
	EtcdVersion = "v3.7.3"
	KubeVersion = "v1.37.2"
	KwokVersion = "v0.8.0"
)

// Binaries holds absolute paths of the control-plane executables.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kubectl, Kwok string
}

// RepoRoot returns the root of the graphcd source tree this package was
// compiled from. Tests and the demo run from source, so the build script is
// found there.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// BinDir is where hack/cluster-bins.sh caches the binaries.
func BinDir() (string, error) {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find cache directory: %w", err)
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "graphcd", "bin"), nil
}

// EnsureBinaries returns the control-plane binaries, building any that are
// missing with hack/cluster-bins.sh (minutes on a cold machine, instant when
// cached).
func EnsureBinaries(ctx context.Context) (Binaries, error) {
	dir, err := BinDir()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Etcd:              filepath.Join(dir, "etcd-"+EtcdVersion),
		APIServer:         filepath.Join(dir, "kube-apiserver-"+KubeVersion),
		ControllerManager: filepath.Join(dir, "kube-controller-manager-"+KubeVersion),
		Scheduler:         filepath.Join(dir, "kube-scheduler-"+KubeVersion),
		Kubectl:           filepath.Join(dir, "kubectl-"+KubeVersion),
		Kwok:              filepath.Join(dir, "kwok-"+KwokVersion),
	}
	if b.allPresent() {
		return b, nil
	}
	script := filepath.Join(RepoRoot(), "hack", "cluster-bins.sh")
	cmd := exec.CommandContext(ctx, "bash", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Run(); err != nil {
		return Binaries{}, fmt.Errorf("build control-plane binaries with %s: %w: %s", script, err, lastLines(stderr.String(), 5))
	}
	if !b.allPresent() {
		return Binaries{}, fmt.Errorf("%s ran but binaries are missing from %s", script, dir)
	}
	return b, nil
}

func (b Binaries) allPresent() bool {
	for _, p := range []string{b.Etcd, b.APIServer, b.ControllerManager, b.Scheduler, b.Kubectl, b.Kwok} {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
