package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/appset"
	"github.com/graphcd/graphcd/internal/secretcodec"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/gittree"
	"github.com/graphcd/graphcd/reposerver/inproc"
)

// maxAppSetSize bounds the -f file.
const maxAppSetSize = 4 << 20

func newAppSetCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "appset",
		Short: "Work with ApplicationSets offline",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newAppSetGenerateCmd())
	return c
}

func newAppSetGenerateCmd() *cobra.Command {
	var file, clustersFile string
	output := command.NewEnum("yaml", "yaml", "json")
	c := &cobra.Command{
		Use:   "generate -f FILE",
		Short: "Print the Applications an ApplicationSet generates",
		Long: `Print the Applications an ApplicationSet manifest (graphcd's or Argo CD's)
generates, through the code the controller will use: its generators'
parameter sets (list, clusters, git, matrix and merge so far) rendered into its template
({{param}} placeholders, or goTemplate with Sprig's functions), then
templatePatch. --clusters reads the cluster Secrets the clusters
generator sees (a YAML stream or List, as kubectl get secrets -o yaml
prints them); the cluster graphcd runs in is always there, as in-cluster,
unless a Secret names its server. The git generators read their
repositories (URLs, file:// URLs or local working copies) through
graphcd's Git layer. An element whose template fails is reported on stderr with
its parameters and the reason, and the command exits 2; the other
elements are printed. -o json prints one JSON array, -o yaml a
multi-document stream.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			set, err := readAppSet(file)
			if err != nil {
				return &command.UsageError{Cmd: c, Err: err}
			}
			clusters, err := readClusters(c, clustersFile)
			if err != nil {
				return &command.UsageError{Cmd: c, Err: err}
			}
			sources, err := newOfflineSources(clusters)
			if err != nil {
				return err
			}
			defer sources.close()
			results, err := appset.Generate(set, sources)
			if err != nil {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: %w", file, err)}
			}
			var apps []*v1alpha1.Application
			var failed []error
			for i, r := range results {
				if r.Err != nil {
					params, _ := json.Marshal(r.Params)
					failed = append(failed, fmt.Errorf("element %d of generator %d %s: %w", i, r.Generator, params, r.Err))
					continue
				}
				apps = append(apps, r.App)
			}
			if err := printList(c.OutOrStdout(), apps, output.String()); err != nil {
				return err
			}
			if len(failed) > 0 {
				return command.ExitCodeError{Code: command.ExitUsage, Err: errors.Join(failed...)}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the ApplicationSet manifest (YAML or JSON; - reads stdin)")
	c.Flags().StringVar(&clustersFile, "clusters", "", "cluster Secrets for the clusters generator (YAML stream or List)")
	c.Flags().VarP(output, "output", "o", "output format: yaml, json")
	_ = c.MarkFlagRequired("file")
	return c
}

// offlineSources give the generators the clusters of --clusters and the
// Git repositories the git generators name, read through the repository
// service the controller uses, in process with a temporary working
// directory (file:// URLs and local working copies allowed: offline, the
// user's own repositories are theirs to read).
type offlineSources struct {
	clusterList
	svc  *inproc.Local
	work string
}

func newOfflineSources(clusters clusterList) (*offlineSources, error) {
	work, err := os.MkdirTemp("", "graphcd-appset-")
	if err != nil {
		return nil, err
	}
	svc, err := inproc.New(inproc.Options{WorkDir: work, AllowFileURLs: true, Logger: slog.Default()})
	if err != nil {
		_ = os.RemoveAll(work)
		return nil, err
	}
	return &offlineSources{clusterList: clusters, svc: svc, work: work}, nil
}

// GitMatch implements appset.GitSources.
func (o *offlineSources) GitMatch(repoURL, revision string, req gittree.Request) (*gittree.Result, error) {
	return o.svc.MatchTree(context.Background(), reposerver.Repository{URL: repoURL}, revision, req)
}

func (o *offlineSources) close() {
	o.svc.Close()
	_ = os.RemoveAll(o.work)
}

// clusterList is the clusters generator's view of a file of cluster
// Secrets.
type clusterList []appset.Cluster

func (l clusterList) Clusters() ([]appset.Cluster, error) { return l, nil }

// readClusters decodes the cluster Secrets in path ("" reads none) and
// adds the cluster graphcd runs in unless one of them is it.
func readClusters(c *cobra.Command, path string) (clusterList, error) {
	var out clusterList
	inCluster := false
	if path != "" {
		b, err := command.ReadInput(c, path)
		if err != nil {
			return nil, err
		}
		for _, doc := range splitDocuments(path, b) {
			if doc.err != nil {
				return nil, doc.err
			}
			for _, obj := range doc.objs {
				var sec corev1.Secret
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &sec); err != nil || obj.GetKind() != "Secret" {
					return nil, fmt.Errorf("%s document %d: %s %s is not a Secret", path, doc.index, obj.GetKind(), obj.GetName())
				}
				cl, err := secretcodec.DecodeCluster(&sec)
				if err != nil {
					return nil, fmt.Errorf("%s document %d: %w", path, doc.index, err)
				}
				inCluster = inCluster || cl.Server == secretcodec.InClusterServer
				out = append(out, appset.Cluster{Name: cl.Name, Server: cl.Server, Project: cl.Project, Labels: sec.Labels, Annotations: sec.Annotations})
			}
		}
	}
	if !inCluster {
		out = append(clusterList{{Name: secretcodec.InClusterName, Server: secretcodec.InClusterServer}}, out...)
	}
	return out, nil
}

// readAppSet reads and decodes an ApplicationSet manifest file.
func readAppSet(path string) (*v1alpha1.ApplicationSet, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path) //nolint:gosec // the user's own file, named on the command line
		if err != nil {
			return nil, err
		}
		defer func() { _ = f.Close() }()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxAppSetSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAppSetSize {
		return nil, fmt.Errorf("%s: more than %d bytes", path, maxAppSetSize)
	}
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if gv := meta.APIVersion; meta.Kind != "ApplicationSet" || (gv != v1alpha1.GroupVersion.String() && gv != "argoproj.io/v1alpha1") {
		return nil, fmt.Errorf("%s: not an ApplicationSet of %s (or argoproj.io/v1alpha1), but %s %s", path, v1alpha1.GroupVersion, gv, meta.Kind)
	}
	var set v1alpha1.ApplicationSet
	if err := yaml.UnmarshalStrict(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &set, nil
}
