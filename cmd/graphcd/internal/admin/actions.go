package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/actions"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/sync"
)

type adminActionsOptions struct {
	file, settings string
	params         []string
	output         *command.Enum
}

func newActionsCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "actions",
		Short: "List and try resource actions on the objects in a file, as the server would run them",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newActionsListCmd(), newActionsRunCmd())
	return c
}

// addActionsFlags adds the flags list and run share.
func addActionsFlags(c *cobra.Command, o *adminActionsOptions) {
	f := c.Flags()
	f.StringVarP(&o.file, "file", "f", "", "file with the objects (- for stdin)")
	f.StringVar(&o.settings, "settings", "", "graphcd-cm / argocd-cm ConfigMap with resource.customizations.actions")
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(o.output.Allowed(), ", "))
	_ = c.MarkFlagRequired("file")
}

func newActionsListCmd() *cobra.Command {
	o := &adminActionsOptions{output: command.NewEnum("json", "json", "yaml", "table")}
	c := &cobra.Command{
		Use:   "list -f FILE",
		Short: "List the actions each object in a file offers",
		Long: `List the resource actions every object in FILE (YAML or JSON, many
documents, "-" for stdin) offers: the built-in ones and the custom ones
configured in --settings, a ConfigMap in the graphcd-cm format (an Argo CD
argocd-cm with resource.customizations.actions works as it is).

Prints, in input order, each object with its actions (name, disabled,
params). A document that cannot be read, or an object whose discovery
script fails, gets an "error" entry; the others are still listed, and the
exit code is then 2.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runActionsList(c, o) },
	}
	addActionsFlags(c, o)
	return c
}

func newActionsRunCmd() *cobra.Command {
	o := &adminActionsOptions{output: command.NewEnum("json", "json", "yaml")}
	c := &cobra.Command{
		Use:   "run NAME -f FILE",
		Short: "Show what an action would write, without writing it",
		Long: `Run the action NAME on the one object in FILE, with the built-in actions
and the custom ones configured in --settings, and print the objects it
would write, each with its operation: patch (with the JSON merge patch) or
create. Nothing is written anywhere.

Parameters are given as --param name=value, once per parameter. An
unknown or disabled action, a bad parameter, a failing script or a result
that breaks the rules ends with exit code 2 and the reason.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return runActionsRun(c, o, args[0]) },
	}
	addActionsFlags(c, o)
	c.Flags().StringArrayVar(&o.params, "param", nil, "action parameter as name=value (repeatable)")
	return c
}

// actionsObject is one object of `admin actions list`.
type actionsObject struct {
	APIVersion string           `json:"apiVersion,omitempty"`
	Kind       string           `json:"kind,omitempty"`
	Namespace  string           `json:"namespace,omitempty"`
	Name       string           `json:"name,omitempty"`
	Actions    []actions.Action `json:"actions"`
	Error      string           `json:"error,omitempty"`
}

// loadActions reads the settings and FILE and builds the engine; the
// scope of kinds comes from the built-in list and the CRDs in FILE.
func loadActions(c *cobra.Command, o *adminActionsOptions) (*actions.Engine, []document, error) {
	s, err := loadSettings(c, o.settings)
	if err != nil {
		return nil, nil, err
	}
	data, err := command.ReadInput(c, o.file)
	if err != nil {
		return nil, nil, err
	}
	docs := splitDocuments(o.file, data)
	var objs []*unstructured.Unstructured
	for _, d := range docs {
		objs = append(objs, d.objs...)
	}
	engine, err := actions.New(actions.Options{Custom: engineopts.Actions(s), ClusterScoped: sync.OfflineScope(objs, nil)})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", o.settings, err)
	}
	return engine, docs, nil
}

func runActionsList(c *cobra.Command, o *adminActionsOptions) error {
	engine, docs, err := loadActions(c, o)
	if err != nil {
		return err
	}
	out := []actionsObject{}
	failed := false
	for _, doc := range docs {
		if doc.err != nil {
			failed = true
			out = append(out, actionsObject{Error: doc.err.Error()})
			continue
		}
		for _, obj := range doc.objs {
			l := actionsObject{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Actions: []actions.Action{}}
			list, err := engine.Discover(c.Context(), obj)
			if err != nil {
				failed = true
				l.Error = err.Error()
			} else if list != nil {
				l.Actions = list
			}
			out = append(out, l)
		}
	}
	w := c.OutOrStdout()
	if o.output.String() == "table" {
		err = actionsTable(w, out)
	} else {
		err = writeStructured(w, o.output.String(), out)
	}
	if err != nil {
		return err
	}
	if failed {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("the actions of some objects of %s could not be listed", o.file)}
	}
	return nil
}

func actionsTable(w io.Writer, objs []actionsObject) error {
	t := command.NewTable(w, "KIND", "NAMESPACE", "NAME", "ACTION", "DISABLED", "PARAMS")
	for _, o := range objs {
		switch {
		case o.Error != "":
			t.Row(orDash(o.Kind), orDash(o.Namespace), orDash(o.Name), "-", "-", "error: "+command.OneLine(o.Error))
		case len(o.Actions) == 0:
			t.Row(o.Kind, orDash(o.Namespace), o.Name, "-", "-", "-")
		}
		for _, a := range o.Actions {
			params := make([]string, 0, len(a.Params))
			for _, p := range a.Params {
				s := p.Name + ":" + p.Type
				if p.Default != "" {
					s += "=" + p.Default
				}
				params = append(params, s)
			}
			t.Row(o.Kind, orDash(o.Namespace), o.Name, a.Name, fmt.Sprint(a.Disabled), orDash(strings.Join(params, ",")))
		}
	}
	return t.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func runActionsRun(c *cobra.Command, o *adminActionsOptions, name string) error {
	params := map[string]string{}
	for _, kv := range o.params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return &command.UsageError{Cmd: c, Err: fmt.Errorf("--param %q: want name=value", kv)}
		}
		params[k] = v
	}
	engine, docs, err := loadActions(c, o)
	if err != nil {
		return err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range docs {
		if doc.err != nil {
			return command.ExitCodeError{Code: command.ExitUsage, Err: doc.err}
		}
		objs = append(objs, doc.objs...)
	}
	if len(objs) != 1 {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("%s holds %d objects; an action runs on one", o.file, len(objs))}
	}
	changes, err := engine.Run(c.Context(), objs[0], name, params)
	if err != nil {
		return command.ExitCodeError{Code: command.ExitUsage, Err: err}
	}
	return writeStructured(c.OutOrStdout(), o.output.String(), changes)
}

// writeStructured writes v as indented JSON or as YAML.
func writeStructured(w io.Writer, format string, v any) error {
	if format == "yaml" {
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
