package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newAppActionsCmd(o *appOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "actions",
		Short: "List and run resource actions (restart, scale, suspend, ...) on an application's objects",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newAppActionsListCmd(o), newAppActionsRunCmd(o))
	return c
}

// objectFilter picks live objects of an application by Argo CD's flags;
// an empty field matches every object.
type objectFilter struct{ resourceFlags }

// liveObject is one object of an application's resource tree.
type liveObject = client.ApplicationObjectsApplicationResourceTreeNodesResourceNode

// objects lists the live objects of app the filter picks, in tree order.
// The group must match exactly only when given: "" would otherwise pick
// the core group alone.
func (f *objectFilter) objects(c *cobra.Command, o *appOptions, cl *client.Client, app string) ([]liveObject, error) {
	resp, err := client.ApplicationObjects(c.Context(), cl.GraphQL, o.name(app), o.nsOf(app))
	if err != nil {
		return nil, err
	}
	if resp.Application == nil {
		return nil, notFound(app)
	}
	var out []liveObject
	if tree := resp.Application.ResourceTree; tree != nil {
		for _, n := range tree.Nodes {
			if !n.Missing && match(f.group, n.Group) && match(f.kind, n.Kind) && match(f.namespace, n.Namespace) && match(f.name, n.Name) {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func match(want, got string) bool { return want == "" || want == got }

// objectInput names obj of app for the API.
func objectInput(o *appOptions, app string, obj liveObject) client.ApplicationResourceInput {
	return client.ApplicationResourceInput{Application: o.ref(app), Group: obj.Group, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
}

// objectActions are the actions one object offers, as -o json/yaml print
// them.
type objectActions struct {
	Group     string                                                               `json:"group"`
	Kind      string                                                               `json:"kind"`
	Namespace string                                                               `json:"namespace"`
	Name      string                                                               `json:"name"`
	Actions   []client.ResourceActionsApplicationLiveResourceActionsResourceAction `json:"actions"`
}

func newAppActionsListCmd(o *appOptions) *cobra.Command {
	var filter objectFilter
	c := &cobra.Command{
		Use:   "list NAME",
		Short: "List the actions the objects of an application offer",
		Example: `  graphcd app actions list guestbook
  graphcd app actions list guestbook --group apps --kind Deployment -o json`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			objs, err := filter.objects(c, o, cl, args[0])
			if err != nil {
				return err
			}
			var found []objectActions
			for _, obj := range objs {
				resp, err := client.ResourceActions(c.Context(), cl.GraphQL, o.name(args[0]), o.nsOf(args[0]), obj.Group, obj.Kind, obj.Namespace, obj.Name)
				if err != nil {
					return fmt.Errorf("%s/%s %s: %w", obj.Group, obj.Kind, obj.Name, err)
				}
				if resp.Application == nil || len(resp.Application.LiveResource.Actions) == 0 {
					continue
				}
				found = append(found, objectActions{Group: obj.Group, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name, Actions: resp.Application.LiveResource.Actions})
			}
			return printActions(c, o.output.String(), found)
		}),
	}
	filter.add(c, true)
	return c
}

// printActions prints Argo CD's columns, one row per action; wide adds
// the namespace and the parameters.
func printActions(c *cobra.Command, format string, found []objectActions) error {
	w := c.OutOrStdout()
	switch format {
	case "json", "yaml":
		if found == nil {
			found = []objectActions{}
		}
		return printStructured(w, format, found)
	case "name":
		for _, f := range found {
			for _, a := range f.Actions {
				if _, err := fmt.Fprintln(w, a.Name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	wide := format == "wide"
	cols := []string{"GROUP", "KIND", "NAME", "ACTION", "DISABLED"}
	if wide {
		cols = []string{"GROUP", "KIND", "NAMESPACE", "NAME", "ACTION", "DISABLED", "PARAMETERS"}
	}
	t := command.NewTable(w, cols...)
	for _, f := range found {
		for _, a := range f.Actions {
			if !wide {
				t.Row(f.Group, f.Kind, f.Name, a.Name, strconv.FormatBool(a.Disabled))
				continue
			}
			params := make([]string, 0, len(a.Params))
			for _, p := range a.Params {
				params = append(params, fmt.Sprintf("%s:%s=%s", p.Name, p.Type, p.Default))
			}
			t.Row(f.Group, f.Kind, f.Namespace, f.Name, a.Name, strconv.FormatBool(a.Disabled), strings.Join(params, ","))
		}
	}
	return t.Flush()
}

func newAppActionsRunCmd(o *appOptions) *cobra.Command {
	var filter objectFilter
	var all bool
	var params []string
	c := &cobra.Command{
		Use:   "run NAME ACTION --kind KIND [--resource-name NAME]",
		Short: "Run a resource action on objects of an application (needs its action/<group>/<kind>/<action> right)",
		Example: `  graphcd app actions run guestbook restart --kind Deployment --resource-name web
  graphcd app actions run guestbook scale --kind Deployment --resource-name web --param replicas=3
  graphcd app actions run guestbook restart --kind Deployment --all`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("want NAME and ACTION, got %d arguments", len(args))}
			}
			return appArgs(o)(c, args[:1])
		},
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if filter.kind == "" {
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s is required", command.FlagOrigin(c, "kind"))}
			}
			values, err := actionParams(c, params)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			objs, err := filter.objects(c, o, cl, args[0])
			if err != nil {
				return err
			}
			switch {
			case len(objs) == 0:
				return fmt.Errorf("application %s has no live %s matching the flags (%s)", args[0], filter.kind, client.CodeNotFound)
			case len(objs) > 1 && !all:
				return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%d objects match; name one with %s or pass %s to run on each",
					len(objs), command.FlagOrigin(c, "resource-name"), command.FlagOrigin(c, "all"))}
			}
			for _, obj := range objs {
				resp, err := client.RunResourceAction(c.Context(), cl.GraphQL, objectInput(o, args[0], obj), args[1], values)
				if err != nil {
					return fmt.Errorf("%s/%s %s: %w", obj.Group, obj.Kind, obj.Name, err)
				}
				wrote := make([]string, 0, len(resp.RunResourceAction))
				for _, ch := range resp.RunResourceAction {
					wrote = append(wrote, fmt.Sprintf("%s %s %s", strings.ToLower(string(ch.Operation)), ch.Kind, strings.TrimPrefix(ch.Namespace+"/"+ch.Name, "/")))
				}
				if _, err := fmt.Fprintf(c.OutOrStdout(), "%s %s: %s ran (%s)\n",
					strings.TrimPrefix(obj.Group+"/"+obj.Kind, "/"), strings.TrimPrefix(obj.Namespace+"/"+obj.Name, "/"), args[1], strings.Join(wrote, ", ")); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	filter.add(c, true)
	c.Flags().BoolVar(&all, "all", false, "run on every object the flags match")
	c.Flags().StringArrayVar(&params, "param", nil, "a parameter of the action as name=value (repeatable)")
	return c
}

// actionParams parses --param name=value flags.
func actionParams(c *cobra.Command, flags []string) ([]client.ResourceActionParamInput, error) {
	out := make([]client.ResourceActionParamInput, 0, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s: want name=value, got %q", command.FlagOrigin(c, "param"), truncate(f, 60))}
		}
		out = append(out, client.ResourceActionParamInput{Name: name, Value: value})
	}
	return out, nil
}
