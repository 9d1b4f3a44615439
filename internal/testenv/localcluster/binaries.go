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
// compiled from: the nearest directory above its source that holds the
// module's go.mod, wherever in the tree the package lives. Tests and the
// demo run from source, so the build script is found there.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	for dir := filepath.Dir(file); ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Dir(file) // not built from source: nothing better to offer
		}
		dir = parent
	}
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

// Names of the binaries, as hack/cluster-bins.sh takes them.
const (
	BinEtcd              = "etcd"
	BinAPIServer         = "kube-apiserver"
	BinControllerManager = "kube-controller-manager"
	BinScheduler         = "kube-scheduler"
	BinKubectl           = "kubectl"
	BinKwok              = "kwok"
)

// binaries returns the names of the binaries a cluster of mode runs.
func (m Mode) binaries() []string {
	if m == Full {
		return []string{BinEtcd, BinAPIServer, BinControllerManager, BinScheduler, BinKwok}
	}
	return []string{BinEtcd, BinAPIServer}
}

// EnsureBinaries returns the paths of every control-plane binary, building
// those of names that are missing with hack/cluster-bins.sh (minutes on a
// cold machine, instant when cached). Only names are sure to exist: a
// package whose clusters need no kubectl or KWOK never waits for them to
// be built.
func EnsureBinaries(ctx context.Context, names ...string) (Binaries, error) {
	dir, err := BinDir()
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Etcd:              filepath.Join(dir, BinEtcd+"-"+EtcdVersion),
		APIServer:         filepath.Join(dir, BinAPIServer+"-"+KubeVersion),
		ControllerManager: filepath.Join(dir, BinControllerManager+"-"+KubeVersion),
		Scheduler:         filepath.Join(dir, BinScheduler+"-"+KubeVersion),
		Kubectl:           filepath.Join(dir, BinKubectl+"-"+KubeVersion),
		Kwok:              filepath.Join(dir, BinKwok+"-"+KwokVersion),
	}
	paths := map[string]string{
		BinEtcd: b.Etcd, BinAPIServer: b.APIServer, BinControllerManager: b.ControllerManager,
		BinScheduler: b.Scheduler, BinKubectl: b.Kubectl, BinKwok: b.Kwok,
	}
	var missing []string
	for _, n := range names {
		p, ok := paths[n]
		if !ok {
			return Binaries{}, fmt.Errorf("unknown control-plane binary %q", n)
		}
		if !executable(p) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return b, nil
	}
	script := filepath.Join(RepoRoot(), "hack", "cluster-bins.sh")
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, missing...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &bytes.Buffer{}
	if err := cmd.Run(); err != nil {
		return Binaries{}, fmt.Errorf("build %s with %s: %w: %s", strings.Join(missing, ", "), script, err, lastLines(stderr.String(), 5))
	}
	for _, n := range missing {
		if !executable(paths[n]) {
			return Binaries{}, fmt.Errorf("%s ran but %s is missing from %s", script, n, dir)
		}
	}
	return b, nil
}

func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
