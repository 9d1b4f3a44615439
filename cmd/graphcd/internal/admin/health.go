package admin

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/health"
)

type adminHealthOptions struct {
	file, settings string
	output         *command.Enum
}

func newHealthCmd() *cobra.Command {
	o := &adminHealthOptions{output: command.NewEnum("json", "json", "text")}
	c := &cobra.Command{
		Use:   "health -f FILE",
		Short: "Judge the health of the objects in a file, as the controller would",
		Long: `Judge the health of every object in FILE (YAML or JSON, many documents,
"-" for stdin) with the built-in checks and the Lua checks configured in
--settings, a ConfigMap in the graphcd-cm format (an Argo CD argocd-cm with
health customizations works as it is).

Prints one result per object, in input order: a JSON line
{"apiVersion","kind","namespace","name","status","message"} (-o json) or a
table (-o text). Objects of kinds with no health check have an empty status.
A document that cannot be read gets an "error" line; the others are still
judged, and the exit code is then 2.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runAdminHealth(c, o) },
	}
	f := c.Flags()
	f.StringVarP(&o.file, "file", "f", "", "file with the objects to judge (- for stdin)")
	f.StringVar(&o.settings, "settings", "", "graphcd-cm / argocd-cm ConfigMap with health customizations")
	f.VarP(o.output, "output", "o", "output format: json, text")
	_ = c.MarkFlagRequired("file")
	return c
}

// healthLine is one line of `admin health -o json`.
type healthLine struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name,omitempty"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Error      string `json:"error,omitempty"`
}

func runAdminHealth(c *cobra.Command, o *adminHealthOptions) error {
	s, err := loadSettings(c, o.settings)
	if err != nil {
		return err
	}
	engine, err := health.New(health.Options{LuaChecks: engineopts.HealthChecks(s)})
	if err != nil {
		return fmt.Errorf("%s: %w", o.settings, err)
	}
	data, err := command.ReadInput(c, o.file)
	if err != nil {
		return err
	}
	var lines []healthLine
	failed := false
	for _, doc := range splitDocuments(o.file, data) {
		if doc.err != nil {
			failed = true
			lines = append(lines, healthLine{Error: doc.err.Error()})
			continue
		}
		for _, obj := range doc.objs {
			l := healthLine{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
			res, err := engine.Check(c.Context(), obj)
			switch {
			case err != nil:
				l.Status, l.Message = string(health.StatusUnknown), err.Error()
			case res == nil:
				l.Message = "no health check for this kind"
			default:
				l.Status, l.Message = string(res.Status), res.Message
			}
			lines = append(lines, l)
		}
	}
	out := c.OutOrStdout()
	if o.output.String() == "text" {
		w := command.NewTable(out, "KIND", "NAMESPACE", "NAME", "STATUS", "MESSAGE")
		for _, l := range lines {
			if l.Error != "" {
				w.Row("-", "-", "-", "Error", l.Error)
				continue
			}
			w.Row(l.Kind, l.Namespace, l.Name, l.Status, l.Message)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	} else {
		enc := json.NewEncoder(out)
		for _, l := range lines {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
	}
	if failed {
		return command.ExitCodeError{Code: command.ExitUsage, Err: fmt.Errorf("some documents of %s could not be read", o.file)}
	}
	return nil
}
