package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// appOptions are the flags of every app subcommand.
type appOptions struct {
	cliOptions
	namespace string
	output    *command.Enum
}

// An application argument is NAME, or NAMESPACE/NAME as in Argo CD for
// an app outside the server's namespace (--app-namespace says the same).
// appArgs checks it before the command runs; name and nsOf split it.

// appArgs accepts one application argument, NAME or NAMESPACE/NAME, whose
// namespace agrees with --app-namespace when both are given.
func appArgs(o *appOptions) cobra.PositionalArgs {
	return namespacedArgs("application", "--app-namespace", &o.namespace)
}

// namespacedArgs accepts one argument naming an object of kind, NAME or
// NAMESPACE/NAME, whose namespace agrees with the flag (whose value is
// *namespace) when both are given.
func namespacedArgs(kind, flag string, namespace *string) cobra.PositionalArgs {
	count := cliArgs(1, "NAME")
	return func(c *cobra.Command, args []string) error {
		if err := count(c, args); err != nil {
			return err
		}
		usage := func(format string, a ...any) error {
			return &command.UsageError{Cmd: c, Err: fmt.Errorf(format, a...)}
		}
		ns, name, qualified := strings.Cut(args[0], "/")
		switch {
		case !qualified && name == "" && ns == "":
			return usage("the %s name is empty", kind)
		case !qualified:
			return nil
		case ns == "" || name == "" || strings.Contains(name, "/"):
			return usage("%s %q: want NAME or NAMESPACE/NAME", kind, truncate(args[0], 253))
		case *namespace != "" && *namespace != ns:
			return usage("%s %q is in namespace %q, but %s says %q", kind, truncate(args[0], 253), truncate(ns, 63), flag, truncate(*namespace, 63))
		}
		return nil
	}
}

// name is the application name of arg (see appArgs).
func (o *appOptions) name(arg string) string { return nameOf(arg) }

// nsOf is the namespace of the application arg: the one it names, else
// --app-namespace, else nil for the server's own.
func (o *appOptions) nsOf(arg string) *string { return namespaceOf(arg, o.namespace) }

// nameOf is the name of the argument NAME or NAMESPACE/NAME.
func nameOf(arg string) string {
	if _, name, ok := strings.Cut(arg, "/"); ok {
		return name
	}
	return arg
}

// namespaceOf is the namespace of the argument NAME or NAMESPACE/NAME: the
// one it names, else flag's, else nil for the server's own.
func namespaceOf(arg, flag string) *string {
	if ns, _, ok := strings.Cut(arg, "/"); ok {
		return &ns
	}
	if flag == "" {
		return nil
	}
	return &flag
}

// ref is the API's reference to the application arg.
func (o *appOptions) ref(arg string) client.ApplicationRef {
	return client.ApplicationRef{Name: o.name(arg), Namespace: o.nsOf(arg)}
}

// truncate shortens s, a user's input, for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ListPageSize is how many items the list commands ask for at once: the
// API's cap.
const ListPageSize = 500

func newAppCmd() *cobra.Command {
	o := &appOptions{cliOptions: cliOptions{}, output: newOutput()}
	c := &cobra.Command{
		Use:   "app",
		Short: "Manage applications: list, get, create, set, unset, sync, wait, diff, history, rollback, logs, delete",
		Long: `Manage applications through the graphcd API.

Exit codes: 0 when all went as asked; 1 when the command worked but the
outcome is not the one asked for (app wait timed out, app diff found
differences, a sync or rollback failed); 2 for errors, such as an unknown
application (NOT_FOUND) or a refused request (FORBIDDEN).`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	f := c.PersistentFlags()
	o.addServerFlags(f)
	f.StringVar(&o.namespace, "app-namespace", "", "the namespace of the Application objects; the server's own when empty")
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(outputFormats, ", "))
	c.AddCommand(newAppListCmd(o), newAppGetCmd(o), newAppCreateCmd(o), newAppDeleteCmd(o),
		newAppSyncCmd(o), newAppWaitCmd(o), newAppHistoryCmd(o), newAppRollbackCmd(o),
		newAppTerminateOpCmd(o), newAppDiffCmd(o), newAppResourcesCmd(o), newAppEventsCmd(o),
		newAppRefreshCmd(o), newAppPatchResourceCmd(o), newAppDeleteResourceCmd(o),
		newAppManifestsCmd(o), newAppSetCmd(o), newAppUnsetCmd(o), newAppActionsCmd(o),
		newAppLogsCmd(o))
	return c
}

// completeApps completes an application name from the server's list.
func completeApps(o *appOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cl, err := o.connect()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		filter := &client.ApplicationFilter{Search: &prefix}
		resp, err := client.ListApplications(c.Context(), cl.GraphQL, ListPageSize, nil, filter)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, n := range resp.Applications.Nodes {
			if strings.HasPrefix(n.Name, prefix) {
				names = append(names, n.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func newAppListCmd(o *appOptions) *cobra.Command {
	var project []string
	var selector string
	c := &cobra.Command{
		Use:   "list",
		Short: "List applications (all of them: pages are fetched as needed)",
		Example: `  graphcd app list
  graphcd app list --project web -l team=web -o wide
  graphcd app list -o name`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			filter := &client.ApplicationFilter{Projects: project}
			if selector != "" {
				filter.LabelSelector = &selector
			}
			if o.namespace != "" {
				filter.Namespaces = []string{o.namespace}
			}
			var apps []client.AppSummary
			var after *string
			for {
				resp, err := client.ListApplications(c.Context(), cl.GraphQL, ListPageSize, after, filter)
				if err != nil {
					return err
				}
				for _, n := range resp.Applications.Nodes {
					apps = append(apps, n.AppSummary)
				}
				page := resp.Applications.PageInfo
				if !page.HasNextPage || page.EndCursor == nil {
					break
				}
				after = page.EndCursor
			}
			return printAppList(c.OutOrStdout(), o.output.String(), apps)
		}),
	}
	c.Flags().StringSliceVarP(&project, "project", "p", nil, "only the apps of these projects")
	c.Flags().StringVarP(&selector, "selector", "l", "", "only the apps whose labels match this selector, e.g. team=web,env in (prod)")
	return c
}

func printAppList(w io.Writer, format string, apps []client.AppSummary) error {
	switch format {
	case "json", "yaml":
		if apps == nil {
			apps = []client.AppSummary{}
		}
		return printStructured(w, format, apps)
	case "name":
		for _, a := range apps {
			if _, err := fmt.Fprintln(w, a.Name); err != nil {
				return err
			}
		}
		return nil
	}
	wide := format == "wide"
	headers := []string{"NAME", "NAMESPACE", "PROJECT", "SYNC", "HEALTH", "OPERATION", "DESTINATION"}
	if wide {
		headers = append(headers, "SYNC POLICY", "REPO", "PATH", "TARGET", "REVISION")
	}
	t := command.NewTable(w, headers...)
	for _, a := range apps {
		op := ""
		if s := a.Status.OperationState; s != nil {
			op = string(s.Phase)
		}
		d := a.Spec.Destination
		row := []string{a.Name, a.Namespace, a.Project, string(a.Status.Sync.Status), string(a.Status.Health.Status), op,
			destination(d.Server, d.Name, d.Namespace)}
		if wide {
			repo, path, target := "", "", ""
			if s := a.Spec.Source; s != nil {
				repo, path, target = s.RepoURL, s.Path, s.TargetRevision
			} else if len(a.Spec.Sources) > 0 {
				repo, path, target = a.Spec.Sources[0].RepoURL, a.Spec.Sources[0].Path, a.Spec.Sources[0].TargetRevision
				repo += fmt.Sprintf(" (+%d)", len(a.Spec.Sources)-1)
			}
			policy := "Manual"
			if p := a.Spec.SyncPolicy; p != nil && p.Automated != nil && p.Automated.Enabled {
				policy = "Auto"
				if p.Automated.Prune {
					policy += "-Prune"
				}
			}
			row = append(row, policy, repo, path, target, shortRevision(a.Status.Sync.Revision))
		}
		t.Row(row...)
	}
	return t.Flush()
}

func destination(server, name, namespace string) string {
	cluster := name
	if cluster == "" {
		cluster = server
	}
	return cluster + "/" + namespace
}

func shortRevision(r string) string {
	if len(r) == 40 {
		return r[:7]
	}
	return r
}

// getApp fetches an application; one that does not exist is a NOT_FOUND
// error.
func getApp(c *cobra.Command, o *appOptions, cl *client.Client, name string) (*client.AppDetail, error) {
	resp, err := client.GetApplication(c.Context(), cl.GraphQL, o.name(name), o.nsOf(name))
	if err != nil {
		return nil, err
	}
	if resp.Application == nil {
		return nil, notFound(name)
	}
	return &resp.Application.AppDetail, nil
}

func notFound(name string) error {
	return fmt.Errorf("application %q not found (%s)", name, client.CodeNotFound)
}

func newAppGetCmd(o *appOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "get NAME",
		Short:             "Show an application: source, destination, status, resources",
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			app, err := getApp(c, o, cl, args[0])
			if err != nil {
				return err
			}
			return printApp(c.OutOrStdout(), o.output.String(), app)
		}),
	}
}

func printApp(w io.Writer, format string, a *client.AppDetail) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, a)
	case "name":
		_, err := fmt.Fprintln(w, a.Name)
		return err
	}
	kv := command.NewTable(w, "Name:", a.Name)
	kv.Row("Namespace:", a.Namespace)
	kv.Row("Project:", a.Project)
	d := a.Spec.Destination
	kv.Row("Destination:", destination(d.Server, d.Name, d.Namespace))
	if s := a.Spec.Source; s != nil {
		kv.Row("Repo:", s.RepoURL)
		kv.Row("Path:", s.Path)
		kv.Row("Target:", s.TargetRevision)
	}
	for i, s := range a.Spec.Sources {
		kv.Row(fmt.Sprintf("Source %d:", i+1), strings.Join([]string{s.RepoURL, s.Path, s.TargetRevision, s.Chart}, " "))
	}
	policy := "Manual"
	if p := a.Spec.SyncPolicy; p != nil && p.Automated != nil && p.Automated.Enabled {
		policy = fmt.Sprintf("Automated (prune %t, self-heal %t)", p.Automated.Prune, p.Automated.SelfHeal)
	}
	kv.Row("Sync Policy:", policy)
	kv.Row("Sync Status:", strings.TrimSpace(string(a.Status.Sync.Status)+" to "+shortRevision(a.Status.Sync.Revision)))
	kv.Row("Health Status:", strings.TrimSpace(string(a.Status.Health.Status)+" "+a.Status.Health.Message))
	if s := a.Status.OperationState; s != nil {
		kv.Row("Operation:", strings.TrimSpace(string(s.Phase)+" "+s.Message))
	}
	if a.Deleting {
		kv.Row("Deleting:", "yes")
	}
	for _, cond := range a.Status.Conditions {
		kv.Row("Condition:", cond.Type+": "+cond.Message)
	}
	if err := kv.Flush(); err != nil {
		return err
	}
	if len(a.Status.Resources) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	return printResources(w, a.Status.Resources)
}

func printResources(w io.Writer, rs []client.AppDetailStatusApplicationStatusResourcesResourceStatus) error {
	t := command.NewTable(w, "GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HEALTH", "MESSAGE")
	for _, r := range rs {
		health, msg := "", ""
		if r.Health != nil {
			health, msg = string(r.Health.Status), r.Health.Message
		}
		if r.RequiresPruning {
			msg = strings.TrimSpace("requires pruning " + msg)
		}
		t.Row(r.Group, r.Kind, r.Namespace, r.Name, string(r.Status), health, msg)
	}
	return t.Flush()
}

func newAppResourcesCmd(o *appOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "resources NAME",
		Short:             "List an application's resources and how each compares with Git",
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			app, err := getApp(c, o, cl, args[0])
			if err != nil {
				return err
			}
			switch f := o.output.String(); f {
			case "json", "yaml":
				return printStructured(c.OutOrStdout(), f, app.Status.Resources)
			case "name":
				for _, r := range app.Status.Resources {
					if _, err := fmt.Fprintf(c.OutOrStdout(), "%s:%s:%s\n", r.Group, r.Kind, r.Name); err != nil {
						return err
					}
				}
				return nil
			}
			return printResources(c.OutOrStdout(), app.Status.Resources)
		}),
	}
}

func newAppCreateCmd(o *appOptions) *cobra.Command {
	var file string
	var upsert bool
	c := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create an application from its manifest (graphcd.io or argoproj.io Application, YAML or JSON)",
		Example: `  graphcd app create -f guestbook.yaml
  kubectl get application guestbook -n argocd -o yaml | graphcd app create -f - --upsert`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			if file == "" {
				return &command.UsageError{Cmd: c, Err: errors.New("give the manifest with -f FILE (- for stdin)")}
			}
			manifest, err := command.ReadInput(c, file)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.CreateApplication(c.Context(), cl.GraphQL, client.CreateApplicationInput{Manifest: string(manifest), Upsert: upsert})
			if err != nil {
				return err
			}
			return printChanged(c.OutOrStdout(), o.output.String(), &resp.CreateApplication.AppSummary, "created")
		}),
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the Application manifest; - for stdin")
	c.Flags().BoolVar(&upsert, "upsert", false, "update the application when one of that name exists")
	return c
}

// printChanged reports an application a mutation returned.
func printChanged(w io.Writer, format string, a *client.AppSummary, what string) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, a)
	case "name":
		_, err := fmt.Fprintln(w, a.Name)
		return err
	}
	_, err := fmt.Fprintf(w, "application %q %s\n", a.Name, what)
	return err
}

func newAppDeleteCmd(o *appOptions) *cobra.Command {
	var cascade, wait bool
	var timeout time.Duration
	policy := command.NewEnum("foreground", "foreground", "background")
	c := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an application (and, with --cascade, the default, its resources)",
		Example: `  graphcd app delete guestbook --wait
  graphcd app delete guestbook --cascade=false`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			in := client.DeleteApplicationInput{Application: o.ref(args[0]), Cascade: cascade,
				PropagationPolicy: client.PropagationPolicy(strings.ToUpper(policy.String()))}
			if _, err := client.DeleteApplication(c.Context(), cl.GraphQL, in); err != nil {
				return err
			}
			if wait {
				if err := waitGone(c, o, cl, args[0], timeout); err != nil {
					return err
				}
			}
			if o.output.String() == "name" {
				_, err = fmt.Fprintln(c.OutOrStdout(), args[0])
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "application %q deleted\n", args[0])
			return err
		}),
	}
	c.Flags().BoolVar(&cascade, "cascade", true, "delete the application's resources first")
	c.Flags().Var(policy, "propagation-policy", "how a cascading delete removes resources: foreground (the app goes once its resources and their dependents are gone) or background")
	c.Flags().BoolVar(&wait, "wait", false, "wait until the application is gone (its resources deleted, when cascading)")
	c.Flags().DurationVar(&timeout, "timeout", 0, "with --wait, give up after this long (exit code 1); 0 waits forever")
	return c
}
