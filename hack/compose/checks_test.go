package compose

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kindv1alpha4 "sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/auth/accounts"
	"github.com/graphcd/graphcd/hack/demo/demorepo"
	"github.com/graphcd/graphcd/internal/testenv/install"
)

// What the demo is made of, by the names docker-compose.yml gives it.
const (
	composeFile = "docker-compose.yml"
	// src is where every service mounts the checkout, read-only.
	src = "/src"
	// demoNetwork is the compose network kind's node joins.
	demoNetwork = "demo"
	dockerSock  = "/var/run/docker.sock"
	// The files of the demo, relative to the checkout.
	toolsDir    = "hack/compose"
	kindConfig  = "hack/compose/kind.yaml"
	overlayDir  = "hack/compose/install"
	appsFile    = "hack/compose/applications.yaml"
	installBase = "deploy/install/kustomization.yaml"
	kubeModule  = "hack/cluster/kubernetes/go.mod"
)

const (
	completed = types.ServiceConditionCompletedSuccessfully
	healthy   = types.ServiceConditionHealthy
)

// wantDependsOn is the order the services start in: each service's
// dependencies and the condition it waits for.
var wantDependsOn = map[string]map[string]string{
	"kind":    {},
	"console": {},
	"image":   {"console": completed},
	"git":     {},
	"install": {"kind": healthy, "image": completed, "git": healthy},
}

// loadProject loads root's docker-compose.yml as `docker compose` does,
// with relative paths resolved against root and no variables from the
// environment, so the file's defaults are what is checked.
func loadProject(ctx context.Context, root string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, composeFile)},
		cli.WithWorkingDirectory(root),
		cli.WithEnv(nil),
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
		cli.WithConsistency(true),
	)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(ctx)
}

// demo is the compose demo as the checks see it.
type demo struct {
	root     string
	project  *types.Project
	problems []string
}

// check returns every way root's docker-compose.yml disagrees with the
// files of root it uses; none when it is consistent.
func check(ctx context.Context, root string) []string {
	p, err := loadProject(ctx, root)
	if err != nil {
		return []string{fmt.Sprintf("load %s: %v", composeFile, err)}
	}
	d := &demo{root: root, project: p}
	for _, step := range []func(){
		d.checkServices, d.checkImages, d.checkOrder, d.checkVolumes, d.checkCommands,
		d.checkNetwork, d.checkPorts, d.checkKind, d.checkInstall, d.checkApplications,
	} {
		step()
	}
	return d.problems
}

func (d *demo) failf(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

// service is the named service, empty when it is missing (checkServices
// reports that).
func (d *demo) service(name string) types.ServiceConfig {
	return d.project.Services[name]
}

// env is a service's environment variable, "" when unset.
func (d *demo) env(service, key string) string {
	if v := d.service(service).Environment[key]; v != nil {
		return *v
	}
	return ""
}

func (d *demo) path(rel string) string { return filepath.Join(d.root, filepath.FromSlash(rel)) }

func (d *demo) read(rel string) string {
	b, err := os.ReadFile(d.path(rel))
	if err != nil {
		d.failf("%v", err)
	}
	return string(b)
}

func (d *demo) checkServices() {
	var got []string
	for name := range d.project.Services {
		got = append(got, name)
	}
	var want []string
	for name := range wantDependsOn {
		want = append(want, name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(got, want); diff != "" {
		d.failf("services (-got +want):\n%s", diff)
	}
}

// pinned is an image reference with a full version tag (1.26.8,
// 27.5.1-cli), never latest or a floating major.
var pinned = regexp.MustCompile(`^[a-z0-9./-]+:v?[0-9]+\.[0-9]+\.[0-9]+(-[a-z0-9.-]+)?$`)

func (d *demo) checkImages() {
	goMinor := regexp.MustCompile(`(?m)^go ([0-9]+\.[0-9]+)`).FindStringSubmatch(d.read("go.mod"))
	if goMinor == nil {
		d.failf("go.mod names no go version")
		return
	}
	dockerfile := d.read(toolsDir + "/Dockerfile")
	images := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(dockerfile, -1)
	var refs []string
	for _, m := range images {
		refs = append(refs, m[1]+" ("+toolsDir+"/Dockerfile)")
	}
	for _, name := range []string{"kind", "install"} {
		s := d.service(name)
		if s.Build == nil {
			d.failf("service %s: no build; it runs the tools image of %s/Dockerfile", name, toolsDir)
			continue
		}
		if s.Build.Context != d.path(toolsDir) || s.Build.Dockerfile != "Dockerfile" {
			d.failf("service %s: builds %s with %s, want %s with Dockerfile", name, s.Build.Context, s.Build.Dockerfile, d.path(toolsDir))
		}
		if ctx := s.Build.AdditionalContexts["kubernetes"]; ctx != d.path(path.Dir(kubeModule)) {
			d.failf("service %s: build context kubernetes = %q, want %s (the kubectl pin)", name, ctx, d.path(path.Dir(kubeModule)))
		}
		if s.Image != d.service("kind").Image {
			d.failf("service %s: image %q, want the kind service's %q", name, s.Image, d.service("kind").Image)
		}
	}
	if !strings.Contains(dockerfile, "COPY --from=kubernetes go.mod go.sum") {
		d.failf("%s/Dockerfile does not build kubectl from the kubernetes context's go.mod", toolsDir)
	}
	for _, name := range []string{"console", "image", "git"} {
		if s := d.service(name); s.Build != nil || s.Image == "" {
			d.failf("service %s: want a public image, not a build", name)
		} else {
			refs = append(refs, s.Image+" (service "+name+")")
		}
	}
	for _, ref := range refs {
		image, _, _ := strings.Cut(ref, " ")
		if !pinned.MatchString(image) {
			d.failf("image %s is not pinned to a full version tag", ref)
		}
		if strings.HasPrefix(image, "golang:") && !strings.HasPrefix(image, "golang:"+goMinor[1]+".") {
			d.failf("image %s: go.mod wants Go %s", ref, goMinor[1])
		}
	}
	arg := regexp.MustCompile(`(?m)^ARG KUBE_VERSION=(\S+)`).FindStringSubmatch(dockerfile)
	pin := regexp.MustCompile(`(?m)k8s\.io/kubernetes (v\S+)`).FindStringSubmatch(d.read(kubeModule))
	if arg == nil || pin == nil || arg[1] != pin[1] {
		d.failf("%s/Dockerfile builds kubectl %v, %s pins %v", toolsDir, arg, kubeModule, pin)
	}
}

func (d *demo) checkOrder() {
	got := map[string]map[string]string{}
	for name, s := range d.project.Services {
		got[name] = map[string]string{}
		for dep, cond := range s.DependsOn {
			got[name][dep] = cond.Condition
			if cond.Condition == healthy && d.service(dep).HealthCheck == nil {
				d.failf("service %s waits for %s to be healthy, which has no healthcheck", name, dep)
			}
		}
	}
	if diff := cmp.Diff(got, wantDependsOn); diff != "" {
		d.failf("depends_on (-got +want):\n%s", diff)
	}
	// A cycle would leave `docker compose up` with nothing to start.
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) bool
	visit = func(n string) bool {
		switch state[n] {
		case 1:
			return false
		case 2:
			return true
		}
		state[n] = 1
		for dep := range d.service(n).DependsOn {
			if !visit(dep) {
				return false
			}
		}
		state[n] = 2
		return true
	}
	for name := range d.project.Services {
		if !visit(name) {
			d.failf("depends_on has a cycle through %s", name)
			break
		}
	}
	if g := d.service("kind").StopGracePeriod; g == nil || *g < types.Duration(time.Minute) {
		d.failf("service kind: stop_grace_period must leave a minute or more to delete the cluster")
	}
}

// mount is the service's volume at target, nil if none.
func mount(s types.ServiceConfig, target string) *types.ServiceVolumeConfig {
	for i := range s.Volumes {
		if s.Volumes[i].Target == target {
			return &s.Volumes[i]
		}
	}
	return nil
}

func (d *demo) checkVolumes() {
	for name, s := range d.project.Services {
		m := mount(s, src)
		if m == nil || m.Type != types.VolumeTypeBind || m.Source != d.root || !m.ReadOnly {
			d.failf("service %s: want the checkout %s mounted read-only at %s", name, d.root, src)
		}
		for _, v := range s.Volumes {
			if v.Type == types.VolumeTypeBind && strings.HasPrefix(v.Source+"/", d.root+"/") && !v.ReadOnly {
				d.failf("service %s: mounts %s writable; the demo never writes into the checkout", name, v.Source)
			}
			// Docker cannot create a mount point in a read-only mount.
			if rel, ok := strings.CutPrefix(v.Target, src+"/"); ok {
				if fi, err := os.Stat(d.path(rel)); err != nil || !fi.IsDir() {
					d.failf("service %s: mounts %s on %s, which is no directory of the checkout", name, v.Source, v.Target)
				}
			}
		}
	}
	for _, name := range []string{"kind", "install"} {
		if m := mount(d.service(name), dockerSock); m == nil || m.Source != dockerSock {
			d.failf("service %s: needs the host's %s", name, dockerSock)
		}
	}
	// shared checks that a named volume passes files from one service to
	// another, at the directory the services' settings name.
	shared := func(volume, writer, writerDir, reader, readerDir string) {
		w, r := mount(d.service(writer), writerDir), mount(d.service(reader), readerDir)
		if w == nil || w.Type != types.VolumeTypeVolume || w.Source != volume || w.ReadOnly {
			d.failf("service %s: want volume %s writable at %s", writer, volume, writerDir)
		}
		if r == nil || r.Type != types.VolumeTypeVolume || r.Source != volume || !r.ReadOnly {
			d.failf("service %s: want volume %s read-only at %s", reader, volume, readerDir)
		}
	}
	shared("kube", "kind", path.Dir(d.env("kind", "KUBECONFIG")), "install", path.Dir(d.env("install", "KUBECONFIG")))
	shared("image", "image", d.flags("image", "./hack/image")["out"], "install", path.Dir(d.env("install", "IMAGE_ARCHIVE")))
	shared("console", "console", "/console", "image", src+"/console/dist")
	for _, v := range []string{"go-build", "go-mod"} {
		for _, name := range []string{"image", "git"} {
			if !slices.ContainsFunc(d.service(name).Volumes, func(m types.ServiceVolumeConfig) bool { return m.Source == v }) {
				d.failf("service %s: lacks the shared Go cache volume %s", name, v)
			}
		}
	}
}

// scripts are the shell scripts of the checkout a service runs.
func (d *demo) scripts(name string) []string {
	var rel []string
	for _, s := range regexp.MustCompile(src+`/(\S+\.sh)`).FindAllStringSubmatch(strings.Join(d.service(name).Command, " "), -1) {
		rel = append(rel, s[1])
	}
	return rel
}

// command is what a service runs, with its scripts, as text.
func (d *demo) command(name string) string {
	text := strings.Join(d.service(name).Command, " ")
	for _, s := range d.scripts(name) {
		text += "\n" + d.read(s)
	}
	return text
}

// flags are the flags the service passes to `go run pkg`, by name, nil if
// it does not run pkg.
func (d *demo) flags(service, pkg string) map[string]string {
	for line := range strings.SplitSeq(d.command(service), "\n") {
		f := strings.Fields(line)
		i := slices.Index(f, pkg)
		if i < 2 || f[i-2] != "go" || f[i-1] != "run" {
			continue
		}
		flags := map[string]string{}
		for j := i + 1; j < len(f); j++ {
			if !strings.HasPrefix(f[j], "-") {
				continue
			}
			name := strings.TrimLeft(f[j], "-")
			if k, v, ok := strings.Cut(name, "="); ok {
				flags[k] = v
			} else if j+1 < len(f) && !strings.HasPrefix(f[j+1], "-") {
				flags[name] = f[j+1]
			} else {
				flags[name] = ""
			}
		}
		return flags
	}
	return nil
}

// definedFlags are the names of the flags a command's main package defines
// with the flag package, read from its source.
func definedFlags(dir string) (map[string]bool, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "flag" {
				return true
			}
			// The name is the first string argument of flag.String,
			// flag.StringVar, flag.Var ...
			for _, arg := range call.Args {
				if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					name, _ := strconv.Unquote(lit.Value)
					names[name] = true
					break
				}
			}
			return true
		})
	}
	return names, nil
}

// knownEnv are variables the images set themselves.
var knownEnv = map[string]bool{"HOME": true, "PATH": true}

func (d *demo) checkCommands() {
	// Each Go command the services run, and the flags they give it.
	for service, pkg := range map[string]string{"image": "./hack/image", "git": "./hack/demo/gitserver"} {
		used := d.flags(service, pkg)
		if used == nil {
			d.failf("service %s does not run go run %s", service, pkg)
			continue
		}
		defined, err := definedFlags(d.path(pkg))
		if err != nil {
			d.failf("service %s runs %s: %v", service, pkg, err)
			continue
		}
		for name := range used {
			if !defined[name] {
				d.failf("service %s: %s has no flag --%s", service, pkg, name)
			}
		}
	}
	// hack/image names its tarballs so (build.go); install loads the one
	// the image service renames to IMAGE_ARCHIVE.
	if !strings.Contains(d.read("hack/image/build.go"), `"graphcd-"+p.OS+"-"+p.Architecture+".tar"`) ||
		!strings.Contains(d.command("image"), "graphcd-linux-$arch.tar "+d.env("install", "IMAGE_ARCHIVE")) {
		d.failf("service image: does not leave hack/image's tarball at IMAGE_ARCHIVE %s", d.env("install", "IMAGE_ARCHIVE"))
	}
	if p := d.flags("image", "./hack/image")["platforms"]; !strings.HasPrefix(p, "linux/") || strings.Contains(p, ",") {
		d.failf("service image: --platforms %q, want the one linux platform kind runs", p)
	}
	for name := range d.project.Services {
		for _, s := range d.scripts(name) {
			if out, err := exec.Command("sh", "-n", d.path(s)).CombinedOutput(); err != nil { //nolint:noctx // a syntax check
				d.failf("service %s runs %s: sh -n: %v: %s", name, s, err, out)
			}
		}
		text := d.command(name)
		if hc := d.service(name).HealthCheck; hc != nil {
			text += "\n" + strings.Join(hc.Test, " ")
		}
		// Files of the checkout the service uses.
		for _, p := range regexp.MustCompile(src+`(/[A-Za-z0-9_./-]*[A-Za-z0-9_])`).FindAllStringSubmatch(text, -1) {
			if _, err := os.Stat(d.path(strings.TrimPrefix(p[1], "/"))); err != nil {
				d.failf("service %s uses %s%s: %v", name, src, p[1], err)
			}
		}
		// Settings its scripts read from the environment.
		for _, v := range regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)`).FindAllStringSubmatch(text, -1) {
			if d.service(name).Environment[v[1]] == nil && !knownEnv[v[1]] {
				d.failf("service %s: its command uses $%s, which its environment does not set", name, v[1])
			}
		}
	}
	for _, name := range []string{"image", "git"} {
		if i := d.service(name).Init; i == nil || !*i {
			d.failf("service %s: needs init: true, for `go run` to stop on SIGTERM", name)
		}
	}
}

func (d *demo) checkNetwork() {
	network := d.project.Networks[demoNetwork].Name
	if network == "" || d.env("kind", "KIND_EXPERIMENTAL_DOCKER_NETWORK") != network {
		d.failf("kind's node must join network %q (KIND_EXPERIMENTAL_DOCKER_NETWORK = %q)", network, d.env("kind", "KIND_EXPERIMENTAL_DOCKER_NETWORK"))
	}
	for _, name := range []string{"kind", "git", "install"} {
		if _, ok := d.service(name).Networks[demoNetwork]; !ok {
			d.failf("service %s is not on network %s, with kind's node", name, demoNetwork)
		}
	}
	if c := d.env("kind", "KIND_CLUSTER"); c == "" || c != d.env("install", "KIND_CLUSTER") {
		d.failf("KIND_CLUSTER: kind creates %q, install loads into %q", c, d.env("install", "KIND_CLUSTER"))
	}
}

// gitPort is the port the git service listens on in its container.
func (d *demo) gitPort() string {
	_, port, err := net.SplitHostPort(d.flags("git", "./hack/demo/gitserver")["listen"])
	if err != nil {
		d.failf("service git: --listen: %v", err)
	}
	return port
}

func (d *demo) checkPorts() {
	for name, s := range d.project.Services {
		for _, p := range s.Ports {
			if p.HostIP != "127.0.0.1" {
				d.failf("service %s publishes %s on %q; the demo is for this machine only (127.0.0.1)", name, p.Published, p.HostIP)
			}
		}
	}
	gitPort := d.gitPort()
	published := ""
	for _, p := range d.service("git").Ports {
		if strconv.Itoa(int(p.Target)) == gitPort {
			published = p.Published
		}
	}
	u, err := url.Parse(d.env("install", "GIT_URL"))
	if err != nil || published == "" || u.Host != "127.0.0.1:"+published || u.Path != demorepo.Path {
		d.failf("GIT_URL %q: the git service listens on %s, published on 127.0.0.1:%q, serving %s", d.env("install", "GIT_URL"), gitPort, published, demorepo.Path)
	}
}

func (d *demo) checkKind() {
	// kind's own types, at the version the tools image builds.
	var c kindv1alpha4.Cluster
	if err := yaml.UnmarshalStrict([]byte(d.read(kindConfig)), &c); err != nil || c.Kind != "Cluster" || c.APIVersion != "kind.x-k8s.io/v1alpha4" {
		d.failf("%s: not a kind v1alpha4 Cluster: %v", kindConfig, err)
		return
	}
	kindVersion := regexp.MustCompile(`(?m)^ARG KIND_VERSION=(\S+)`).FindStringSubmatch(d.read(toolsDir + "/Dockerfile"))
	if kindVersion == nil || !strings.Contains(d.read("go.mod"), "sigs.k8s.io/kind "+kindVersion[1]+"\n") {
		d.failf("%s/Dockerfile builds kind %v, go.mod (whose types check %s) has another", toolsDir, kindVersion, kindConfig)
	}
	console, err := url.Parse(d.env("install", "CONSOLE_URL"))
	if err != nil || console.Scheme != "https" {
		d.failf("CONSOLE_URL %q: want the https URL of the published console", d.env("install", "CONSOLE_URL"))
		return
	}
	for _, n := range c.Nodes {
		for _, m := range n.ExtraPortMappings {
			if strconv.Itoa(int(m.ContainerPort)) != d.env("install", "NODE_PORT") {
				continue
			}
			if m.ListenAddress != "127.0.0.1" {
				d.failf("%s publishes the console on %q, want 127.0.0.1", kindConfig, m.ListenAddress)
			}
			if console.Host != net.JoinHostPort(m.ListenAddress, strconv.Itoa(int(m.HostPort))) {
				d.failf("CONSOLE_URL %s, but %s publishes the NodePort on %s:%d", console, kindConfig, m.ListenAddress, m.HostPort)
			}
			return
		}
	}
	d.failf("%s does not publish NODE_PORT %s", kindConfig, d.env("install", "NODE_PORT"))
}

// kustomization is the part of a Kustomization the demo relies on.
type kustomization struct {
	Images []struct {
		Name string `json:"name"`
	} `json:"images"`
}

func (d *demo) checkInstall() {
	if want := accounts.InitialAdminSecretName; d.env("install", "GRAPHCD_ADMIN_SECRET") != want {
		d.failf("GRAPHCD_ADMIN_SECRET = %q; the server writes the password to %s", d.env("install", "GRAPHCD_ADMIN_SECRET"), want)
	}
	if _, err := os.Stat(d.path(installBase)); err != nil {
		d.failf("%s is missing: the compose demo installs graphcd with it (through %s): %v", installBase, overlayDir, err)
		return
	}
	var overlay kustomization
	if err := yaml.Unmarshal([]byte(d.read(overlayDir+"/kustomization.yaml")), &overlay); err != nil || len(overlay.Images) != 1 {
		d.failf("%s/kustomization.yaml: want one image replaced: %v", overlayDir, err)
		return
	}
	// The overlay must replace the image the install manifests run.
	replaced := overlay.Images[0].Name
	base, err := install.Build(d.path(path.Dir(installBase)))
	if err != nil {
		d.failf("render %s: %v", path.Dir(installBase), err)
		return
	}
	if !slices.ContainsFunc(base, func(o *unstructured.Unstructured) bool {
		return slices.ContainsFunc(containerImages(o), func(img string) bool { return imageName(img) == replaced })
	}) {
		d.failf("%s runs no image %s, which %s replaces", path.Dir(installBase), replaced, overlayDir)
	}

	objs, err := install.Build(d.path(overlayDir))
	if err != nil {
		d.failf("render %s: %v", overlayDir, err)
		return
	}
	ns, image := d.env("install", "GRAPHCD_NAMESPACE"), d.env("install", "GRAPHCD_IMAGE")
	var server, nodePort bool
	for _, o := range objs {
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			c, _ := c.(map[string]any)
			img, _ := c["image"].(string)
			if imageName(img) == replaced {
				d.failf("%s %s still runs %s, not the image loaded into kind", o.GetKind(), o.GetName(), img)
			}
			if o.GetKind() == "Deployment" && o.GetName() == d.env("install", "GRAPHCD_DEPLOYMENT") && o.GetNamespace() == ns && img == image {
				server = true
				if c["imagePullPolicy"] != "Never" {
					d.failf("Deployment %s: imagePullPolicy %v; the image %s is loaded into kind, never pulled", o.GetName(), c["imagePullPolicy"], image)
				}
			}
		}
		if typ, _, _ := unstructured.NestedString(o.Object, "spec", "type"); o.GetKind() == "Service" && o.GetNamespace() == ns && typ == "NodePort" {
			ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
			for _, p := range ports {
				// CONSOLE_URL is https: the NodePort must be the Service's https port.
				if p, _ := p.(map[string]any); fmt.Sprint(p["nodePort"]) == d.env("install", "NODE_PORT") {
					nodePort = p["name"] == "https" || fmt.Sprint(p["port"]) == "443"
				}
			}
		}
	}
	if !server {
		d.failf("%s renders no Deployment %s/%s running %s (GRAPHCD_IMAGE)", overlayDir, ns, d.env("install", "GRAPHCD_DEPLOYMENT"), image)
	}
	if !nodePort {
		d.failf("%s renders no NodePort Service in %s with its https port on NODE_PORT %s", overlayDir, ns, d.env("install", "NODE_PORT"))
	}
}

// containerImages are the images of a workload's pod template.
func containerImages(o *unstructured.Unstructured) []string {
	var images []string
	containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if c, ok := c.(map[string]any); ok {
			img, _ := c["image"].(string)
			images = append(images, img)
		}
	}
	return images
}

// imageName is an image reference without its tag or digest.
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// decodeAll reads every object of a multi-document YAML file.
func decodeAll(text string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var objs []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}

func (d *demo) checkApplications() {
	objs, err := decodeAll(d.read(appsFile))
	if err != nil {
		d.failf("%s: %v", appsFile, err)
		return
	}
	aliases := []string{}
	if n := d.service("git").Networks[demoNetwork]; n != nil {
		aliases = n.Aliases
	}
	appsDir := d.flags("git", "./hack/demo/gitserver")["apps"]
	projects := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "AppProject" {
			projects[o.GetName()] = true
		}
	}
	used := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() != "Application" {
			continue
		}
		name, ns := o.GetName(), d.env("install", "GRAPHCD_NAMESPACE")
		if o.GetNamespace() != ns {
			d.failf("Application %s is in namespace %q, graphcd watches %q", name, o.GetNamespace(), ns)
		}
		repoURL, _, _ := unstructured.NestedString(o.Object, "spec", "source", "repoURL")
		u, err := url.Parse(repoURL)
		if err != nil || u.Scheme != "http" || !slices.Contains(aliases, u.Hostname()) || u.Port() != d.gitPort() || u.Path != demorepo.Path {
			d.failf("Application %s: repoURL %q, but the git service serves http://%v:%s%s", name, repoURL, aliases, d.gitPort(), demorepo.Path)
		}
		if rev, _, _ := unstructured.NestedString(o.Object, "spec", "source", "targetRevision"); rev != demorepo.Branch {
			d.failf("Application %s: targetRevision %q, the samples are on %s", name, rev, demorepo.Branch)
		}
		p, _, _ := unstructured.NestedString(o.Object, "spec", "source", "path")
		if fi, err := os.Stat(d.path(path.Join(appsDir, p))); p == "" || err != nil || !fi.IsDir() {
			d.failf("Application %s: path %q is no directory of %s", name, p, appsDir)
		}
		used[strings.Split(p, "/")[0]] = true
		if project, _, _ := unstructured.NestedString(o.Object, "spec", "project"); !projects[project] {
			d.failf("Application %s: project %q is not in %s", name, project, appsFile)
		}
	}
	samples, err := fs.ReadDir(os.DirFS(d.root), appsDir)
	if err != nil {
		d.failf("service git serves %q: %v", appsDir, err)
	}
	for _, s := range samples {
		if s.IsDir() && !used[s.Name()] {
			d.failf("%s has no Application for the sample %s/%s", appsFile, appsDir, s.Name())
		}
	}
}
