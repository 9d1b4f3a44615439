package admin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/backup"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// backupFlags are the flags export and import share: where graphcd runs.
type backupFlags struct {
	namespace     string
	appNamespaces []string
}

func (f *backupFlags) add(c *cobra.Command) {
	c.Flags().StringVarP(&f.namespace, "namespace", "n", "graphcd", "graphcd's namespace: its AppProjects, settings ConfigMaps and Secrets")
	c.Flags().StringSliceVar(&f.appNamespaces, "application-namespaces", nil,
		"other namespaces whose Applications and ApplicationSets graphcd serves (globs, as the server's flag)")
}

// scope is the backup's scope, with the ConfigMap and Secret names of the
// packages that own them.
func (f *backupFlags) scope(c *cobra.Command) (backup.Scope, error) {
	s := backup.Scope{
		Namespace: f.namespace,
		ConfigMaps: []string{wellknown.SettingsConfigMap, wellknown.RBACConfigMap, notifications.ConfigMapName,
			repocreds.KnownHostsConfigMap, repocreds.TLSCertsConfigMap, manifests.GPGKeysConfigMap},
		Secrets: []string{wellknown.Secret, notifications.SecretName},
	}
	if len(f.appNamespaces) > 0 {
		served, err := project.CompileAppNamespaces(f.namespace, f.appNamespaces)
		if err != nil {
			return s, fmt.Errorf("%s: %w", command.FlagOrigin(c, "application-namespaces"), err)
		}
		s.AppNamespace = served.Allowed
	}
	return s, nil
}

// dynamicClient connects to the cluster of --kubeconfig.
func dynamicClient(c *cobra.Command, kubeconfig string) (dynamic.Interface, error) {
	return connect(c, kubeconn.Options{Kubeconfig: kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig")})
}

// newExportCmd writes graphcd's state to one YAML stream.
func newExportCmd(kubeconfig *string) *cobra.Command {
	var (
		flags          backupFlags
		includeSecrets bool
		output         string
	)
	c := &cobra.Command{
		Use:   "export",
		Short: "Write the Applications, AppProjects, ApplicationSets and settings (and Secrets with --include-secrets) to one YAML stream",
		Long: `Write graphcd's state in the cluster to one YAML stream that "graphcd admin
import" reads back: the settings ConfigMaps, the AppProjects, the
Applications of --namespace and of --application-namespaces, and the
ApplicationSets, without the server's bookkeeping (uid, resourceVersion,
timestamps, owner references) or the Applications' status and operation.
Secrets (repositories, credential templates, clusters, graphcd-secret with
the accounts and session keys, graphcd-notifications-secret) are written
only with --include-secrets, data in clear; the file's first lines say what
it holds. See docs/backup.md.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			scope, err := flags.scope(c)
			if err != nil {
				return err
			}
			dyn, err := dynamicClient(c, *kubeconfig)
			if err != nil {
				return err
			}
			var buf bytes.Buffer
			n, err := backup.Export(c.Context(), dyn, backup.ExportOptions{Scope: scope, IncludeSecrets: includeSecrets}, &buf)
			if err != nil {
				return err
			}
			if output == "-" {
				_, err = io.Copy(c.OutOrStdout(), &buf)
				return err
			}
			// 0600: the file may hold Secrets' data.
			// WriteFile keeps an existing file's mode; Chmod first.
			if err := os.Chmod(output, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("write %s: %w", output, err)
			}
			if err := os.WriteFile(output, buf.Bytes(), 0o600); err != nil {
				return fmt.Errorf("write %s: %w", output, err)
			}
			_, err = fmt.Fprintf(c.ErrOrStderr(), "exported %d objects to %s\n", n, output)
			return err
		},
	}
	flags.add(c)
	c.Flags().BoolVar(&includeSecrets, "include-secrets", false, "also write the repository, credential template, cluster and account Secrets, data in clear")
	c.Flags().StringVarP(&output, "output", "o", "-", `file to write ("-" for stdout)`)
	return c
}

// newImportCmd restores graphcd's state from an export.
func newImportCmd(kubeconfig *string) *cobra.Command {
	var (
		flags         backupFlags
		file          string
		dryRun, prune bool
	)
	c := &cobra.Command{
		Use:   "import -f FILE",
		Short: "Create or update the objects of an export; --prune deletes those it does not hold, --dry-run only reports",
		Long: `Read a file written by "graphcd admin export" and make the cluster match it:
an object missing is created, one that differs is replaced by the file's
(labels, annotations, finalizers and spec; status is left to the
controller), one that matches is left alone, so importing twice changes
nothing. Every document is checked first: only settings ConfigMaps,
repository, cluster and graphcd's Secrets, AppProjects, Applications and
ApplicationSets of graphcd.io in graphcd's namespaces are taken, and
anything else is refused before a write.

--prune then deletes the Applications, AppProjects, ApplicationSets and
settings ConfigMaps (and Secrets, when the file holds Secrets) that the
file does not hold. A pruned Application loses its finalizers first, so
its resources stay in the cluster; a pruned ApplicationSet leaves its
Applications. graphcd-secret is never pruned.

--dry-run sends every write with the API server's dry run and reports what
would happen. See docs/backup.md.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			scope, err := flags.scope(c)
			if err != nil {
				return err
			}
			data, err := command.ReadInput(c, file)
			if err != nil {
				return err
			}
			objs, err := backup.Parse(data, scope)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			dyn, err := dynamicClient(c, *kubeconfig)
			if err != nil {
				return err
			}
			return runImport(c, dyn, objs, backup.ImportOptions{Scope: scope, DryRun: dryRun, Prune: prune, Keep: []string{wellknown.Secret}})
		},
	}
	flags.add(c)
	c.Flags().StringVarP(&file, "file", "f", "", `export to read ("-" for stdin)`)
	c.Flags().BoolVar(&dryRun, "dry-run", false, "check every write with the API server's dry run and report, changing nothing")
	c.Flags().BoolVar(&prune, "prune", false, "delete the objects of the exported kinds that the file does not hold (Applications without their resources)")
	_ = c.MarkFlagRequired("file")
	return c
}

// runImport imports and prints one line per object and a summary.
func runImport(c *cobra.Command, dyn dynamic.Interface, objs []*unstructured.Unstructured, o backup.ImportOptions) error {
	out := c.OutOrStdout()
	suffix := ""
	if o.DryRun {
		suffix = " (dry run)"
	}
	counts := map[backup.Action]int{}
	err := backup.Import(c.Context(), dyn, objs, o, func(r backup.Result) {
		counts[r.Action]++
		_, _ = fmt.Fprintf(out, "%-9s %s %s/%s%s\n", r.Action, r.Kind, r.Namespace, r.Name, suffix)
	})
	summary := fmt.Sprintf("%d created, %d updated, %d unchanged, %d pruned%s",
		counts[backup.Created], counts[backup.Updated], counts[backup.Unchanged], counts[backup.Pruned], suffix)
	if err != nil {
		return fmt.Errorf("import stopped (%s so far): %w", summary, err)
	}
	_, err = fmt.Fprintln(out, summary)
	return err
}
