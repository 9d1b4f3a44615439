package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// The Dockerfile gives the image the user, directory, environment and
// entrypoint hack/image gives it, so the two builds run alike.
func TestDockerfileMatchesImage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(localcluster.RepoRoot(), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	want := []string{
		"USER " + defaultUser,
		"WORKDIR /" + homePath,
		"ENV PATH=/usr/local/bin HOME=/" + homePath + " SSL_CERT_FILE=/" + caPath,
		`ENTRYPOINT ["/` + binaryPath + `"]`,
		`CMD ["server"]`,
		"COPY --from=build --chown=65532:65532 /rootfs/" + homePath + " /" + homePath,
		"org.opencontainers.image.source=" + defaultSource,
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("Dockerfile lacks %q", w)
		}
	}
}
