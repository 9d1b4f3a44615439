package localcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Go constants and the build script must pin the same versions, or the
// tests would look for binaries the script never builds.
func TestPinsMatchScript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "hack", "cluster-bins.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ETCD_VERSION=" + EtcdVersion, "KUBE_VERSION=" + KubeVersion, "KWOK_VERSION=" + KwokVersion} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("hack/cluster-bins.sh does not pin %s", want)
		}
	}
}
