package admin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/kubeconn"
	"github.com/graphcd/graphcd/controller/manifests"
	"github.com/graphcd/graphcd/controller/notifications"
	"github.com/graphcd/graphcd/controller/project"
	"github.com/graphcd/graphcd/internal/backup"
	"github.com/graphcd/graphcd/internal/migration"
	"github.com/graphcd/graphcd/internal/wellknown"
	"github.com/graphcd/graphcd/reposerver/repocreds"
)

// importFieldManager owns the fields import-argocd writes.
const importFieldManager = "graphcd-import-argocd"

// importArgoCDOptions are import-argocd's flags.
type importArgoCDOptions struct {
	kubeContext      string
	namespace        string
	targetKubeconfig string
	targetContext    string
	graphcdNamespace string
	apply            bool
	output           *command.Enum
}

// importResult is import-argocd's structured output.
type importResult struct {
	*migration.Report
	DryRun  bool            `json:"dryRun"`
	Actions []backup.Result `json:"actions"`
}

// newImportArgoCDCmd converts a running Argo CD's objects and settings
// into graphcd's.
func newImportArgoCDCmd(kubeconfig *string) *cobra.Command {
	o := &importArgoCDOptions{output: command.NewEnum("text", "text", "json", "yaml")}
	c := &cobra.Command{
		Use:   "import-argocd",
		Short: "Convert a running Argo CD's Applications, AppProjects, ApplicationSets, settings and Secrets to graphcd's; a dry run unless --apply",
		Long: `Read Argo CD's objects in --namespace of the --kubeconfig cluster (only
reading: nothing of Argo CD is changed) and write graphcd's in
--graphcd-namespace of the target cluster (--target-kubeconfig, by default
the same): Applications, AppProjects and ApplicationSets in graphcd.io,
argocd-cm, argocd-rbac-cm, the notifications, known hosts, TLS and GPG
ConfigMaps under graphcd's names, the keys of argocd-secret graphcd reads
(password hashes, webhook secrets, the SSO settings' $key references), and
the repository, credential template and cluster Secrets.

The report says, per Argo CD object, what carries over unchanged, what
changes and how, and what cannot move. Secret values are never printed.
Without --apply every write is checked by the API server's dry run and
nothing changes; with --apply objects are written by server-side apply
(field manager graphcd-import-argocd), so running it again changes nothing.
Live resources keep their tracking ids and are adopted, not re-created.
Scale Argo CD's application controller to 0 first: the report warns while
it runs. See docs/migrating-from-argo-cd.md.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runImportArgoCD(c, *kubeconfig, o) },
	}
	f := c.Flags()
	f.StringVar(&o.kubeContext, "context", "", "kubeconfig context of Argo CD's cluster (default: the current context)")
	f.StringVar(&o.namespace, "namespace", "argocd", "Argo CD's namespace")
	f.StringVar(&o.targetKubeconfig, "target-kubeconfig", "", "kubeconfig of graphcd's cluster (default: --kubeconfig)")
	f.StringVar(&o.targetContext, "target-context", "", "kubeconfig context of graphcd's cluster (default: --context without --target-kubeconfig, else the current context)")
	f.StringVar(&o.graphcdNamespace, "graphcd-namespace", "graphcd", "graphcd's namespace")
	f.BoolVar(&o.apply, "apply", false, "write the objects (server-side apply); without it, only report and check with a dry run")
	f.VarP(o.output, "output", "o", "report format: "+strings.Join(o.output.Allowed(), ", "))
	return c
}

func runImportArgoCD(c *cobra.Command, kubeconfig string, o *importArgoCDOptions) error {
	source, err := connect(c, kubeconn.Options{Kubeconfig: kubeconfig, Origin: command.FlagOrigin(c, "kubeconfig"), Context: o.kubeContext})
	if err != nil {
		return err
	}
	src, err := migration.Read(c.Context(), source, o.namespace, func(own string, patterns []string) (func(string) bool, error) {
		served, err := project.CompileAppNamespaces(own, patterns)
		if err != nil {
			return nil, err
		}
		return served.Allowed, nil
	})
	if err != nil {
		return fmt.Errorf("read Argo CD in namespace %s: %w", o.namespace, err)
	}
	if src.Empty() {
		return fmt.Errorf("no Argo CD in namespace %s: no Applications, AppProjects, ApplicationSets, settings ConfigMaps or Secrets of Argo CD there (--namespace)", o.namespace)
	}
	objs, report, err := migration.Convert(src, migration.Options{
		Namespace: o.graphcdNamespace,
		ConfigMaps: map[string]string{
			migration.ArgoSettingsConfigMap:      wellknown.SettingsConfigMap,
			migration.ArgoRBACConfigMap:          wellknown.RBACConfigMap,
			migration.ArgoNotificationsConfigMap: notifications.ConfigMapName,
			migration.ArgoKnownHostsConfigMap:    repocreds.KnownHostsConfigMap,
			migration.ArgoTLSCertsConfigMap:      repocreds.TLSCertsConfigMap,
			migration.ArgoGPGKeysConfigMap:       manifests.GPGKeysConfigMap,
		},
		Secrets: map[string]string{
			migration.ArgoSecret:              wellknown.Secret,
			migration.ArgoNotificationsSecret: notifications.SecretName,
		},
	})
	if err != nil {
		return err
	}
	target := source
	if o.targetKubeconfig != "" || o.targetContext != "" {
		targetKubeconfig, origin, targetContext := kubeconfig, command.FlagOrigin(c, "kubeconfig"), o.targetContext
		if o.targetKubeconfig != "" {
			targetKubeconfig, origin = o.targetKubeconfig, command.FlagOrigin(c, "target-kubeconfig")
		} else if targetContext == "" {
			targetContext = o.kubeContext
		}
		if target, err = connect(c, kubeconn.Options{Kubeconfig: targetKubeconfig, Origin: origin, Context: targetContext}); err != nil {
			return err
		}
	}
	opts := backup.ImportOptions{Scope: backup.Scope{Namespace: o.graphcdNamespace}, DryRun: !o.apply, FieldManager: importFieldManager}
	if o.output.String() == "text" {
		if err := report.WriteText(c.OutOrStdout()); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(c.OutOrStdout()); err != nil {
			return err
		}
		return runImport(c, target, objs, opts)
	}
	result := importResult{Report: report, DryRun: !o.apply, Actions: []backup.Result{}}
	err = backup.Import(c.Context(), target, objs, opts, func(r backup.Result) { result.Actions = append(result.Actions, r) })
	if werr := writeStructured(c.OutOrStdout(), o.output.String(), result); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("import stopped after %d object(s): %w", len(result.Actions), err)
	}
	return nil
}

// connect returns a dynamic client for o's cluster.
func connect(c *cobra.Command, o kubeconn.Options) (dynamic.Interface, error) {
	k, err := kubeconn.Connect(c.Context(), o)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(k.Config)
}
