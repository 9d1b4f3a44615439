package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newAppRefreshCmd(o *appOptions) *cobra.Command {
	var hard bool
	c := &cobra.Command{
		Use:   "refresh NAME",
		Short: "Compare an application with Git and its cluster again now",
		Example: `  graphcd app refresh guestbook
  graphcd app refresh guestbook --hard`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.RefreshApplication(c.Context(), cl.GraphQL, client.RefreshApplicationInput{Application: o.ref(args[0]), Hard: hard})
			if err != nil {
				return err
			}
			return printChanged(c.OutOrStdout(), o.output.String(), &resp.RefreshApplication.AppSummary, "refreshing")
		}),
	}
	c.Flags().BoolVar(&hard, "hard", false, "render the manifests again rather than reuse cached ones")
	return c
}

// resourceFlags name one live object of an application, with Argo CD's
// flag names.
type resourceFlags struct {
	group, kind, namespace, name string
}

// add adds the flags; as a filter (app actions), each narrows the
// objects picked and none is required.
func (f *resourceFlags) add(c *cobra.Command, filter bool) {
	help := [4]string{"the object's API group (empty for the core group)", "the object's kind (required)",
		"the object's namespace (empty for a cluster-scoped object)", "the object's name (required)"}
	if filter {
		help = [4]string{"only objects of this API group", "only objects of this kind", "only objects in this namespace", "only the object of this name"}
	}
	c.Flags().StringVar(&f.group, "group", "", help[0])
	c.Flags().StringVar(&f.kind, "kind", "", help[1])
	c.Flags().StringVar(&f.namespace, "namespace", "", help[2])
	c.Flags().StringVar(&f.name, "resource-name", "", help[3])
}

func (f *resourceFlags) input(c *cobra.Command, app client.ApplicationRef) (client.ApplicationResourceInput, error) {
	if f.kind == "" || f.name == "" {
		return client.ApplicationResourceInput{}, command.ExitCodeError{Code: command.ExitUsage,
			Err: fmt.Errorf("%s and %s are required", command.FlagOrigin(c, "kind"), command.FlagOrigin(c, "resource-name"))}
	}
	return client.ApplicationResourceInput{Application: app, Group: f.group, Kind: f.kind, Namespace: f.namespace, Name: f.name}, nil
}

func (f *resourceFlags) String() string {
	return strings.TrimPrefix(f.group+"/"+f.kind+" "+strings.TrimPrefix(f.namespace+"/"+f.name, "/"), "/")
}

// patchTypes maps Argo CD's --patch-type values (and short names) to the
// API's.
var patchTypes = map[string]client.PatchType{
	"merge": client.PatchTypeMerge, "application/merge-patch+json": client.PatchTypeMerge,
	"json": client.PatchTypeJson, "application/json-patch+json": client.PatchTypeJson,
	"strategic": client.PatchTypeStrategic, "application/strategic-merge-patch+json": client.PatchTypeStrategic,
}

func newAppPatchResourceCmd(o *appOptions) *cobra.Command {
	var res resourceFlags
	var patch, patchType string
	c := &cobra.Command{
		Use:   "patch-resource NAME --kind KIND --resource-name NAME --patch PATCH",
		Short: "Patch one live object of an application (needs update on it)",
		Example: `  graphcd app patch-resource guestbook --group apps --kind Deployment --namespace web --resource-name web \
    --patch '{"spec":{"replicas":3}}'
  graphcd app patch-resource guestbook --kind ConfigMap --namespace web --resource-name settings \
    --patch '[{"op":"remove","path":"/data/debug"}]' --patch-type application/json-patch+json`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			in, err := res.input(c, o.ref(args[0]))
			if err != nil {
				return err
			}
			pt, ok := patchTypes[patchType]
			if !ok {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: want merge, json or strategic (or Argo CD's MIME types), got %q",
					command.FlagOrigin(c, "patch-type"), truncate(patchType, 60))}
			}
			if patch == "" {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s is required", command.FlagOrigin(c, "patch"))}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.PatchApplicationResource(c.Context(), cl.GraphQL, in, patch, pt); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "%s patched\n", res.String())
			return err
		}),
	}
	res.add(c, false)
	c.Flags().StringVar(&patch, "patch", "", "the patch, as JSON (required)")
	c.Flags().StringVar(&patchType, "patch-type", "merge", "merge, json or strategic (or application/merge-patch+json, application/json-patch+json, application/strategic-merge-patch+json)")
	return c
}

func newAppDeleteResourceCmd(o *appOptions) *cobra.Command {
	var res resourceFlags
	policy := command.NewEnum("background", "foreground", "background")
	c := &cobra.Command{
		Use:               "delete-resource NAME --kind KIND --resource-name NAME",
		Short:             "Delete one live object of an application (needs delete on it)",
		Example:           `  graphcd app delete-resource guestbook --kind Pod --namespace web --resource-name web-5d8f-x`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			in, err := res.input(c, o.ref(args[0]))
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteApplicationResource(c.Context(), cl.GraphQL, in, client.PropagationPolicy(strings.ToUpper(policy.String()))); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "%s deleted\n", res.String())
			return err
		}),
	}
	res.add(c, false)
	c.Flags().Var(policy, "propagation-policy", "how its dependents go: background (after it) or foreground (before it)")
	return c
}
