package compose

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/testenv/localcluster"
)

// Docker does not run on graphcd's build machine, so `docker compose up`
// is proven here only statically: the compose file as compose-go reads
// it, against the files of the repository it uses.

// TestComposeDemo checks the repository's own docker-compose.yml, with
// the install manifests of deploy/install; it fails while they are
// missing.
func TestComposeDemo(t *testing.T) {
	for _, p := range check(t.Context(), localcluster.RepoRoot()) {
		t.Error(p)
	}
}

// TestComposeDemoWithStandInManifests runs the checks over a copy of the
// demo's files with testdata/install in place of deploy/install: they
// pass, so that TestComposeDemoCatchesBreakage shows each one failing for
// its own reason.
func TestComposeDemoWithStandInManifests(t *testing.T) {
	for _, p := range check(t.Context(), standIn(t)) {
		t.Error(p)
	}
}

// TestComposeDemoCatchesBreakage breaks one thing at a time in a copy of
// the demo and expects the checks to name it.
func TestComposeDemoCatchesBreakage(t *testing.T) {
	type edit struct{ file, old, new string }
	for _, tc := range []struct {
		name  string
		edits []edit
		// remove is a file to delete.
		remove string
		want   string
	}{
		{
			name: "a service missing",
			edits: []edit{
				{composeFile, "\n  git:\n", "\n  gitserver:\n"},
				{composeFile, "      git:\n        condition", "      gitserver:\n        condition"},
			},
			want: "services (-got +want)",
		},
		{
			name:  "a flag hack/image lacks",
			edits: []edit{{composeFile, "--platforms linux/", "--platform linux/"}},
			want:  "./hack/image has no flag --platform",
		},
		{
			name:  "no Docker socket for install",
			edits: []edit{{composeFile, "      - /var/run/docker.sock:/var/run/docker.sock\n      - .:/src:ro\n      - kube:/kube:ro", "      - .:/src:ro\n      - kube:/kube:ro"}},
			want:  "service install: needs the host's /var/run/docker.sock",
		},
		{
			name:  "the checkout writable",
			edits: []edit{{composeFile, "      - .:/src:ro\n      - console:/src/console/dist:ro", "      - .:/src\n      - console:/src/console/dist:ro"}},
			want:  "writable; the demo never writes into the checkout",
		},
		{
			name:  "install started before git is healthy",
			edits: []edit{{composeFile, "      git:\n        condition: service_healthy", "      git:\n        condition: service_started"}},
			want:  "depends_on (-got +want)",
		},
		{
			name:  "a dependency cycle",
			edits: []edit{{composeFile, "      - npm:/root/.npm\n", "      - npm:/root/.npm\n    depends_on: [install]\n"}},
			want:  "cycle",
		},
		{
			name:  "the git server published on every address",
			edits: []edit{{composeFile, "127.0.0.1:8081:8080", "8081:8080"}},
			want:  "the demo is for this machine only",
		},
		{
			name:  "another image in kind than in the manifests",
			edits: []edit{{composeFile, "GRAPHCD_IMAGE: graphcd:compose", "GRAPHCD_IMAGE: graphcd:other"}},
			want:  "renders no Deployment graphcd/graphcd-server running graphcd:other",
		},
		{
			name:  "another image replaced than the manifests run",
			edits: []edit{{overlayDir + "/kustomization.yaml", "- name: ghcr.io/graphcd/graphcd", "- name: ghcr.io/graphcd/other"}},
			want:  "runs no image ghcr.io/graphcd/other",
		},
		{
			name:  "the image pulled",
			edits: []edit{{overlayDir + "/kustomization.yaml", "value: Never", "value: IfNotPresent"}},
			want:  "imagePullPolicy IfNotPresent",
		},
		{
			name:  "kind publishing another port than the Service's",
			edits: []edit{{kindConfig, "containerPort: 30443", "containerPort: 30444"}},
			want:  "does not publish NODE_PORT 30443",
		},
		{
			name:  "the console published on every address",
			edits: []edit{{kindConfig, `listenAddress: "127.0.0.1"`, `listenAddress: "0.0.0.0"`}},
			want:  `publishes the console on "0.0.0.0"`,
		},
		{
			name:  "an Application cloning the wrong port",
			edits: []edit{{appsFile, "http://graphcd-demo-git:8080/demo.git\n    path: sync-waves", "http://graphcd-demo-git:9090/demo.git\n    path: sync-waves"}},
			want:  "Application sync-waves: repoURL",
		},
		{
			name:  "a sample without an Application",
			edits: []edit{{appsFile, "path: hello-helm\n", "path: guestbook\n"}},
			want:  "no Application for the sample hack/demo/apps/hello-helm",
		},
		{
			name:  "a script the service runs missing",
			edits: []edit{{composeFile, "/src/hack/compose/install.sh", "/src/hack/compose/setup.sh"}},
			want:  "/src/hack/compose/setup.sh",
		},
		{
			name:  "a script that does not parse",
			edits: []edit{{"hack/compose/kind.sh", "fi\nkind get kubeconfig", "kind get kubeconfig"}},
			want:  "runs hack/compose/kind.sh: sh -n",
		},
		{
			name:  "a setting a script reads left unset",
			edits: []edit{{composeFile, "      NODE_PORT: \"30443\"\n", ""}},
			want:  "uses $NODE_PORT",
		},
		{
			name:   "the install manifests missing",
			remove: installBase,
			want:   installBase + " is missing",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := standIn(t)
			for _, e := range tc.edits {
				replaceOnce(t, filepath.Join(root, e.file), e.old, e.new)
			}
			if tc.remove != "" {
				if err := os.Remove(filepath.Join(root, tc.remove)); err != nil {
					t.Fatal(err)
				}
			}
			problems := check(t.Context(), root)
			for _, p := range problems {
				if strings.Contains(p, tc.want) {
					return
				}
			}
			t.Errorf("no problem mentions %q; got %d:\n%s", tc.want, len(problems), strings.Join(problems, "\n"))
		})
	}
}

// standIn copies what the checks read of the repository into a temporary
// directory, with testdata/install as deploy/install, and returns it.
func standIn(t *testing.T) string {
	t.Helper()
	repo, root := localcluster.RepoRoot(), t.TempDir()
	copyDir := func(from, to string) {
		t.Helper()
		if err := os.CopyFS(filepath.Join(root, to), os.DirFS(filepath.Join(repo, from))); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"hack/compose", "hack/demo/apps", "hack/demo/gitserver", "hack/image", "hack/cluster/kubernetes"} {
		copyDir(dir, dir)
	}
	copyDir("hack/compose/testdata/install", "deploy/install")
	for _, f := range []string{composeFile, "go.mod"} {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Directories the services only mount or read from inside containers.
	for _, dir := range []string{"console/web", "console/dist"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// replaceOnce replaces old, which must occur in file exactly once, so
// that an edit cannot silently miss.
func replaceOnce(t *testing.T, file, old, new string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), old); n != 1 {
		t.Fatalf("%s holds %q %d times, want once", file, old, n)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}
