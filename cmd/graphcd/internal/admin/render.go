package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/renderworker"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

type renderOptions struct {
	app, settings                                                string
	sourceRevisions                                              []string
	repo, revision, path, chart, appName, releaseName, namespace string
	kubeVersion                                                  string
	helmValues, helmSet, helmSetString, kustomizeImages          []string
	jsonnetExtStr, jsonnetTLAStr                                 []string
	plugin, pluginSocketDir                                      string
	output                                                       *command.Enum
	render                                                       renderworker.Options
}

func newRenderCmd() *cobra.Command {
	o := &renderOptions{output: command.NewEnum("yaml", "yaml", "json")}
	c := &cobra.Command{
		Use:   "render --repo URL|PATH | --app FILE",
		Short: "Render an application source's manifests, as the repository server would",
		Long: `Render the manifests of an application source through the same code path as
the repository server: resolve --revision, check out (or pull the chart),
detect the tool (Helm, Kustomize, directory/Jsonnet), render in process.

--repo is a Git URL, a local Git working copy, or with --chart a Helm
repository URL (oci://... for an OCI registry). -o json prints one JSON
array of objects; -o yaml a multi-document stream.

--app renders an Application manifest instead (graphcd's or Argo CD's,
single or multiple sources, file:// and remote repository URLs) as the
controller does: every source, the ref sources' $ref/path value files
read at one resolved revision, with a project that permits everything.
--source-revision POSITION=REVISION renders the source at POSITION (from
1) at REVISION instead of its targetRevision.

--settings reads a graphcd-cm (or argocd-cm) ConfigMap for the tool
settings the server would apply: kustomize.buildOptions (--enable-helm
for helmCharts) and helm.valuesFileSchemes.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runRender(c, o) },
	}
	f := c.Flags()
	f.StringVar(&o.app, "app", "", "an Application manifest (YAML or JSON) to render every source of, as the controller would")
	f.StringArrayVar(&o.sourceRevisions, "source-revision", nil, "with --app: POSITION=REVISION, the revision of the source at POSITION, from 1 (repeatable)")
	f.StringVar(&o.settings, "settings", "", "graphcd-cm / argocd-cm ConfigMap whose kustomize.buildOptions and helm.valuesFileSchemes apply")
	f.StringVar(&o.repo, "repo", "", "Git URL, local Git working copy, or Helm repository URL")
	f.StringVar(&o.revision, "revision", "HEAD", "branch, tag, commit, semver constraint, or chart version")
	f.StringVar(&o.path, "path", ".", "path of the app in the repository")
	f.StringVar(&o.chart, "chart", "", "chart name in a Helm repository (makes --repo a Helm repository)")
	f.StringVar(&o.appName, "app-name", "app", "application name (the Helm release name by default)")
	f.StringVar(&o.releaseName, "release-name", "", "Helm release name")
	f.StringVar(&o.namespace, "namespace", "default", "destination namespace")
	f.StringVar(&o.kubeVersion, "kube-version", "1.37.2", "Kubernetes version the manifests are rendered for")
	f.StringArrayVar(&o.helmValues, "helm-values", nil, "Helm values file in the repository (repeatable)")
	f.StringArrayVar(&o.helmSet, "helm-set", nil, "Helm parameter name=value (repeatable)")
	f.StringArrayVar(&o.helmSetString, "helm-set-string", nil, "Helm string parameter name=value (repeatable)")
	f.StringArrayVar(&o.kustomizeImages, "kustomize-image", nil, "Kustomize image override, e.g. nginx=nginx:1.27 (repeatable)")
	f.StringArrayVar(&o.jsonnetExtStr, "jsonnet-ext-var-str", nil, "Jsonnet external variable name=value (repeatable)")
	f.StringArrayVar(&o.jsonnetTLAStr, "jsonnet-tla-str", nil, "Jsonnet top-level argument name=value (repeatable)")
	f.StringVar(&o.plugin, "plugin", "", "config-management plugin name")
	f.StringVar(&o.pluginSocketDir, "plugin-socket-dir", "", "socket directory of running `graphcd cmp-server`s (enables plugins)")
	f.VarP(o.output, "output", "o", "output format: yaml, json")
	o.render.AddFlags(f)
	c.MarkFlagsOneRequired("repo", "app")
	c.MarkFlagsMutuallyExclusive("repo", "app")
	return c
}

// runRender renders o's source, logging to the process logger that the
// root command sets up.
func runRender(c *cobra.Command, o *renderOptions) error {
	if o.app != "" {
		return runRenderApp(c, o)
	}
	log := slog.Default()
	src, err := o.source()
	if err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	src.RepoURL = o.repo
	local := false
	if st, err := os.Stat(o.repo); o.chart == "" && err == nil && st.IsDir() {
		top, sub, err := gitTopLevel(o.repo)
		if err != nil {
			return err
		}
		src.RepoURL, local = "file://"+top, true
		src.Path = filepath.ToSlash(filepath.Join(sub, src.Path))
	}
	svc, cleanup, err := o.service(c, local)
	if err != nil {
		return err
	}
	defer cleanup()
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source: &src, Destination: v1alpha1.ApplicationDestination{Namespace: o.namespace},
	}}
	app.Name = o.appName
	r, proj, err := o.renderer(c, svc, "default")
	if err != nil {
		return err
	}
	res, err := r.Render(c.Context(), manifests.Request{App: app, Project: proj, Source: src, Revision: o.revision, KubeVersion: o.kubeVersion})
	if err != nil {
		return err
	}
	log.Debug("rendered", "type", res.SourceType, "revision", res.Revision, "objects", len(res.Manifests))
	return printObjects(c, o, res.Manifests)
}

// service starts the in-process repository service a render goes
// through, in a temporary working directory; cleanup stops it (at once on
// SIGINT/SIGTERM too) and removes the directory. allowFiles lets it read
// file:// repositories.
func (o *renderOptions) service(c *cobra.Command, allowFiles bool) (svc *inproc.Local, cleanup func(), err error) {
	work, err := os.MkdirTemp("", "graphcd-render-")
	if err != nil {
		return nil, nil, err
	}
	removeWork := func() { _ = os.RemoveAll(work) }
	worker, err := o.render.Worker(c)
	if err != nil {
		removeWork()
		return nil, nil, err
	}
	svc, err = inproc.New(inproc.Options{
		WorkDir: work, AllowFileURLs: allowFiles, Logger: slog.Default(),
		PluginSocketDir: o.pluginSocketDir, Worker: worker,
	})
	if err != nil {
		removeWork()
		return nil, nil, err
	}
	stop := context.AfterFunc(c.Context(), svc.Close)
	return svc, func() { stop(); svc.Close(); removeWork() }, nil
}

// printObjects prints objs as -o asks: a JSON array or a YAML stream.
func printObjects(c *cobra.Command, o *renderOptions, objs []*unstructured.Unstructured) error {
	list := make([]map[string]any, 0, len(objs))
	for _, m := range objs {
		list = append(list, m.Object)
	}
	return printList(c.OutOrStdout(), list, o.output.String())
}

// printList prints items as format says: "json" one JSON array (empty
// when there are none), else a YAML stream.
func printList[T any](out io.Writer, items []T, format string) error {
	if format == "json" {
		if items == nil {
			items = []T{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	for i, item := range items {
		b, err := yaml.Marshal(item)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := fmt.Fprintln(out, "---"); err != nil {
				return err
			}
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// gitTopLevel finds the Git working copy holding dir: its top directory and
// dir's path inside it. Rendering reads the committed tree at --revision,
// not uncommitted changes.
func gitTopLevel(dir string) (top, sub string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			rel, err := filepath.Rel(d, abs)
			return d, rel, err
		}
		if d == filepath.Dir(d) {
			return "", "", fmt.Errorf("%s is not inside a Git working copy", dir)
		}
	}
}

// source builds the ApplicationSource the flags describe.
func (o *renderOptions) source() (v1alpha1.ApplicationSource, error) {
	src := v1alpha1.ApplicationSource{Path: o.path, Chart: o.chart, TargetRevision: o.revision}
	if o.chart != "" {
		src.Path = ""
	}
	if len(o.helmValues)+len(o.helmSet)+len(o.helmSetString) > 0 || o.releaseName != "" {
		h := &v1alpha1.ApplicationSourceHelm{ValueFiles: o.helmValues, ReleaseName: o.releaseName}
		for _, kv := range o.helmSet {
			p, err := param(kv, false)
			if err != nil {
				return src, err
			}
			h.Parameters = append(h.Parameters, p)
		}
		for _, kv := range o.helmSetString {
			p, err := param(kv, true)
			if err != nil {
				return src, err
			}
			h.Parameters = append(h.Parameters, p)
		}
		src.Helm = h
	}
	if len(o.kustomizeImages) > 0 {
		src.Kustomize = &v1alpha1.ApplicationSourceKustomize{Images: o.kustomizeImages}
	}
	if len(o.jsonnetExtStr)+len(o.jsonnetTLAStr) > 0 {
		var j v1alpha1.ApplicationSourceJsonnet
		for _, kv := range o.jsonnetExtStr {
			p, err := param(kv, true)
			if err != nil {
				return src, err
			}
			j.ExtVars = append(j.ExtVars, v1alpha1.JsonnetVar{Name: p.Name, Value: p.Value})
		}
		for _, kv := range o.jsonnetTLAStr {
			p, err := param(kv, true)
			if err != nil {
				return src, err
			}
			j.TLAs = append(j.TLAs, v1alpha1.JsonnetVar{Name: p.Name, Value: p.Value})
		}
		src.Directory = &v1alpha1.ApplicationSourceDirectory{Jsonnet: j}
	}
	if o.plugin != "" {
		src.Plugin = &v1alpha1.ApplicationSourcePlugin{Name: o.plugin}
	}
	return src, nil
}

func param(kv string, forceString bool) (v1alpha1.HelmParameter, error) {
	name, value, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return v1alpha1.HelmParameter{}, fmt.Errorf("parameter %q: want name=value", kv)
	}
	return v1alpha1.HelmParameter{Name: name, Value: value, ForceString: forceString}, nil
}
