package gitea

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The Go constant and the build script must pin the same release, or the
// tests would look for a binary the script never builds.
func TestPinMatchesScript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(localcluster.RepoRoot(), "hack", "cluster-bins.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "GITEA_VERSION="+Version+"\n") {
		t.Errorf("hack/cluster-bins.sh does not pin GITEA_VERSION=%s", Version)
	}
}
