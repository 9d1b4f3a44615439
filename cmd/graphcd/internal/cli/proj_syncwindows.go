package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// A project's sync windows are edited as Argo CD's argocd proj windows
// does: read the project's spec, change spec.syncWindows, write the spec
// back with updateProjectSpec. A window's ID is its index in the list,
// from 0, as Argo CD numbers them; deleting one renumbers those after it.

// syncWindow is a window as the AppProject spec spells it; only what the
// commands show is typed, the edits work on the spec's own maps.
type syncWindow struct {
	Kind         string   `json:"kind"`
	Schedule     string   `json:"schedule"`
	Duration     string   `json:"duration"`
	Applications []string `json:"applications"`
	Namespaces   []string `json:"namespaces"`
	Clusters     []string `json:"clusters"`
	ManualSync   bool     `json:"manualSync"`
	TimeZone     string   `json:"timeZone"`
	AndOperator  bool     `json:"andOperator"`
	Description  string   `json:"description"`
}

// windowSchedules parses schedules as the controller does: five fields
// or a descriptor such as @daily.
var windowSchedules = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

func newProjWindowsCmd(o *apiOptions) *cobra.Command {
	c := &cobra.Command{
		Use:   "windows",
		Short: "Manage a project's sync windows: list, add, update, delete, enable-manual-sync, disable-manual-sync",
		Long: `Manage the sync windows of a project. A window's ID is its position in
the project's list, from 0 (see graphcd proj windows list); deleting a
window renumbers the ones after it.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newProjWindowsListCmd(o), newProjWindowsAddCmd(o), newProjWindowsUpdateCmd(o),
		newProjWindowsDeleteCmd(o), newProjWindowsManualSyncCmd(o, true), newProjWindowsManualSyncCmd(o, false))
	return c
}

// projectSpec reads a project's spec as JSON decodes it, keeping every
// field, so a write changes only what a command edits.
func projectSpec(c *cobra.Command, cl *client.Client, name string) (map[string]any, error) {
	resp, err := client.ProjectYAML(c.Context(), cl.GraphQL, name)
	if err != nil {
		return nil, err
	}
	if resp.Project == nil {
		return nil, fmt.Errorf("project %q not found (%s)", name, client.CodeNotFound)
	}
	var obj struct {
		Spec map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(resp.Project.Yaml), &obj); err != nil {
		return nil, fmt.Errorf("read the project: %w", err)
	}
	if obj.Spec == nil {
		obj.Spec = map[string]any{}
	}
	return obj.Spec, nil
}

// specWindows returns spec's sync windows as maps, in order.
func specWindows(spec map[string]any) []map[string]any {
	list, _ := spec["syncWindows"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, w := range list {
		m, _ := w.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		out = append(out, m)
	}
	return out
}

// typedWindows decodes spec's sync windows.
func typedWindows(spec map[string]any) ([]syncWindow, error) {
	raw, err := json.Marshal(specWindows(spec))
	if err != nil {
		return nil, err
	}
	var out []syncWindow
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("read the project's sync windows: %w", err)
	}
	return out, nil
}

// editWindows reads project's spec, lets edit change its windows and
// writes the spec back.
func editWindows(c *cobra.Command, o *apiOptions, project string, edit func([]map[string]any) ([]map[string]any, error)) error {
	cl, err := o.connect()
	if err != nil {
		return err
	}
	spec, err := projectSpec(c, cl, project)
	if err != nil {
		return err
	}
	windows, err := edit(specWindows(spec))
	if err != nil {
		return err
	}
	if len(windows) == 0 {
		delete(spec, "syncWindows")
	} else {
		list := make([]any, len(windows))
		for i, w := range windows {
			list[i] = w
		}
		spec["syncWindows"] = list
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	_, err = client.UpdateProjectSpec(c.Context(), cl.GraphQL, client.UpdateProjectSpecInput{Name: project, Spec: string(raw)})
	return err
}

// windowID reads a window ID argument against the n windows there are.
func windowID(c *cobra.Command, arg string, n int) (int, error) {
	id, err := strconv.Atoi(arg)
	switch {
	case err != nil:
		return 0, &command.UsageError{Cmd: c, Err: fmt.Errorf("window ID %q: want a number (see graphcd proj windows list)", truncate(arg, 40))}
	case id < 0 || id >= n:
		return 0, fmt.Errorf("no sync window %d: the project has %d (IDs from 0) (%s)", id, n, client.CodeNotFound)
	}
	return id, nil
}

func newProjWindowsListCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "list PROJECT",
		Short:             "List a project's sync windows with their IDs and whether each is active now",
		Args:              cliArgs(1, "PROJECT"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			spec, err := projectSpec(c, cl, args[0])
			if err != nil {
				return err
			}
			windows, err := typedWindows(spec)
			if err != nil {
				return err
			}
			return printWindows(c.OutOrStdout(), o.output.String(), windows, time.Now())
		}),
	}
}

func printWindows(w io.Writer, format string, windows []syncWindow, now time.Time) error {
	switch format {
	case "json", "yaml":
		if windows == nil {
			windows = []syncWindow{}
		}
		return printStructured(w, format, windows)
	case "name":
		for i := range windows {
			if err := printNames(w, strconv.Itoa(i)); err != nil {
				return err
			}
		}
		return nil
	}
	headers := []string{"ID", "STATUS", "KIND", "SCHEDULE", "DURATION", "APPLICATIONS", "NAMESPACES", "CLUSTERS", "MANUALSYNC", "TIMEZONE", "USEANDOPERATOR"}
	if format == "wide" {
		headers = append(headers, "DESCRIPTION")
	}
	t := command.NewTable(w, headers...)
	for i, win := range windows {
		row := []string{strconv.Itoa(i), windowStatus(win, now), win.Kind, win.Schedule, win.Duration,
			orDash(win.Applications), orDash(win.Namespaces), orDash(win.Clusters),
			enabled(win.ManualSync), orValue(win.TimeZone, "UTC"), enabled(win.AndOperator)}
		if format == "wide" {
			row = append(row, win.Description)
		}
		t.Row(row...)
	}
	return t.Flush()
}

// windowStatus says whether win is open at now: Active, Inactive, or
// Invalid when its schedule, duration or time zone does not parse.
func windowStatus(win syncWindow, now time.Time) string {
	sched, err := windowSchedules.Parse(win.Schedule)
	if err != nil {
		return "Invalid"
	}
	d, err := time.ParseDuration(win.Duration)
	if err != nil {
		return "Invalid"
	}
	loc := time.UTC
	if win.TimeZone != "" {
		if loc, err = time.LoadLocation(win.TimeZone); err != nil {
			return "Invalid"
		}
	}
	// Open when it opened within the last d: its first opening after
	// now-d is not after now.
	if !sched.Next(now.In(loc).Add(-d - time.Second)).After(now) {
		return "Active"
	}
	return "Inactive"
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func orValue(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func enabled(b bool) string {
	if b {
		return "Enabled"
	}
	return "Disabled"
}

// windowFlags are the flags that set a window's fields; only those given
// change a window.
type windowFlags struct {
	kind                               *command.Enum
	schedule, duration, tz, desc       string
	applications, namespaces, clusters []string
	manualSync, andOperator            bool
}

func (wf *windowFlags) add(f *pflag.FlagSet, withKind bool) {
	wf.kind = command.NewEnum("", "allow", "deny")
	if withKind {
		f.Var(wf.kind, "kind", "allow (syncs only inside the window) or deny (no syncs inside it)")
	}
	f.StringVar(&wf.schedule, "schedule", "", `when the window opens, in cron format, e.g. "0 22 * * *"`)
	f.StringVar(&wf.duration, "duration", "", "how long it stays open, e.g. 1h or 30m")
	f.StringSliceVar(&wf.applications, "applications", nil, "the applications it applies to (globs, comma-separated or repeated)")
	f.StringSliceVar(&wf.namespaces, "namespaces", nil, "the destination namespaces it applies to (globs)")
	f.StringSliceVar(&wf.clusters, "clusters", nil, "the destination clusters it applies to (names or URLs, globs)")
	f.StringVar(&wf.tz, "time-zone", "", "the IANA time zone of the schedule, e.g. Europe/Berlin; UTC when empty")
	f.BoolVar(&wf.andOperator, "use-and-operator", false, "an application must match every selector given, not one of them")
	f.StringVar(&wf.desc, "description", "", "what the window is for, e.g. a change ticket")
	if withKind {
		f.BoolVar(&wf.manualSync, "manual-sync", false, "allow manual syncs while the window blocks syncs")
	}
}

// apply sets the fields of w whose flags c was given, and checks the
// result as the controller will read it.
func (wf *windowFlags) apply(c *cobra.Command, w map[string]any) error {
	f := c.Flags()
	set := func(flag, key string, v any) {
		if f.Changed(flag) {
			w[key] = v
		}
	}
	if f.Lookup("kind") != nil {
		set("kind", "kind", wf.kind.String())
		set("manual-sync", "manualSync", wf.manualSync)
	}
	set("schedule", "schedule", wf.schedule)
	set("duration", "duration", wf.duration)
	set("applications", "applications", wf.applications)
	set("namespaces", "namespaces", wf.namespaces)
	set("clusters", "clusters", wf.clusters)
	set("time-zone", "timeZone", wf.tz)
	set("use-and-operator", "andOperator", wf.andOperator)
	set("description", "description", wf.desc)
	if err := checkWindow(w); err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	return nil
}

// checkWindow checks a window as the controller will read it.
func checkWindow(w map[string]any) error {
	str := func(k string) string { s, _ := w[k].(string); return s }
	if k := str("kind"); k != "allow" && k != "deny" {
		return fmt.Errorf("--kind %q: want allow or deny", truncate(k, 40))
	}
	if _, err := windowSchedules.Parse(str("schedule")); err != nil {
		return fmt.Errorf("--schedule %q: %w", truncate(str("schedule"), 100), err)
	}
	if d, err := time.ParseDuration(str("duration")); err != nil || d <= 0 {
		return fmt.Errorf("--duration %q: want a positive duration such as 1h or 30m", truncate(str("duration"), 40))
	}
	if tz := str("timeZone"); tz != "" {
		if _, err := time.LoadLocation(tz); err != nil {
			return fmt.Errorf("--time-zone %q: not a known time zone", truncate(tz, 60))
		}
	}
	for _, k := range []string{"applications", "namespaces", "clusters"} {
		if v, ok := w[k].([]string); ok && len(v) > 0 {
			return nil
		}
		if v, ok := w[k].([]any); ok && len(v) > 0 {
			return nil
		}
	}
	return errors.New("the window applies to nothing: give --applications, --namespaces or --clusters")
}

func newProjWindowsAddCmd(o *apiOptions) *cobra.Command {
	var wf windowFlags
	c := &cobra.Command{
		Use:   "add PROJECT",
		Short: "Add a sync window to a project",
		Example: `  graphcd proj windows add web --kind deny --schedule "0 22 * * *" --duration 8h --applications '*'
  graphcd proj windows add web --kind allow --schedule "0 9 * * 1-5" --duration 8h --namespaces 'prod-*' --time-zone Europe/Berlin`,
		Args:              cliArgs(1, "PROJECT"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			for _, required := range []string{"kind", "schedule", "duration"} {
				if !c.Flags().Changed(required) {
					return &command.UsageError{Cmd: c, Err: fmt.Errorf("give --%s", required)}
				}
			}
			w := map[string]any{}
			if err := wf.apply(c, w); err != nil {
				return err
			}
			id := 0
			err := editWindows(c, o, args[0], func(ws []map[string]any) ([]map[string]any, error) {
				id = len(ws)
				return append(ws, w), nil
			})
			if err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), strconv.Itoa(id),
				fmt.Sprintf("sync window %d added to project %q", id, args[0]))
		}),
	}
	wf.add(c.Flags(), true)
	return c
}

func newProjWindowsUpdateCmd(o *apiOptions) *cobra.Command {
	var wf windowFlags
	c := &cobra.Command{
		Use:   "update PROJECT ID",
		Short: "Change a project's sync window: only the flags given change",
		Example: `  graphcd proj windows update web 0 --duration 4h
  graphcd proj windows update web 1 --applications 'web-*,api' --time-zone UTC`,
		Args:              cliArgs(2, "PROJECT", "ID"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if c.Flags().NFlag() == countInherited(c) {
				return &command.UsageError{Cmd: c, Err: errors.New("nothing to update: give at least one flag")}
			}
			err := editWindows(c, o, args[0], func(ws []map[string]any) ([]map[string]any, error) {
				id, err := windowID(c, args[1], len(ws))
				if err != nil {
					return nil, err
				}
				return ws, wf.apply(c, ws[id])
			})
			if err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[1],
				fmt.Sprintf("sync window %s of project %q updated", args[1], args[0]))
		}),
	}
	wf.add(c.Flags(), false)
	return c
}

// countInherited counts the flags c was given that belong to its parents
// (--server, -o ...), not to c itself.
func countInherited(c *cobra.Command) int {
	n := 0
	c.InheritedFlags().Visit(func(*pflag.Flag) { n++ })
	return n
}

func newProjWindowsDeleteCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "delete PROJECT ID",
		Short:             "Delete a project's sync window (the IDs after it shift down by one)",
		Args:              cliArgs(2, "PROJECT", "ID"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			err := editWindows(c, o, args[0], func(ws []map[string]any) ([]map[string]any, error) {
				id, err := windowID(c, args[1], len(ws))
				if err != nil {
					return nil, err
				}
				return append(ws[:id], ws[id+1:]...), nil
			})
			if err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[1],
				fmt.Sprintf("sync window %s of project %q deleted", args[1], args[0]))
		}),
	}
}

func newProjWindowsManualSyncCmd(o *apiOptions, enable bool) *cobra.Command {
	use, short, what := "disable-manual-sync PROJECT ID", "Refuse manual syncs while a project's sync window blocks syncs", "disabled"
	if enable {
		use, short, what = "enable-manual-sync PROJECT ID", "Allow manual syncs while a project's sync window blocks syncs", "enabled"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cliArgs(2, "PROJECT", "ID"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			err := editWindows(c, o, args[0], func(ws []map[string]any) ([]map[string]any, error) {
				id, err := windowID(c, args[1], len(ws))
				if err != nil {
					return nil, err
				}
				ws[id]["manualSync"] = enable
				return ws, nil
			})
			if err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[1],
				fmt.Sprintf("manual sync %s for sync window %s of project %q", what, args[1], args[0]))
		}),
	}
}
