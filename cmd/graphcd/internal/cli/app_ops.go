package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// errWaitTimeout marks a wait that ran out of time.
var errWaitTimeout = errors.New("timed out")

// watchApp follows an application over the subscription until done says
// so, and returns the last state seen. done gets nil while the
// application does not exist. A timeout (0 for none) ends the wait with
// errWaitTimeout and the last state.
func watchApp(c *cobra.Command, o *appOptions, cl *client.Client, name string, timeout time.Duration,
	done func(a *client.AppDetail) (bool, error),
) (*client.AppDetail, error) {
	ctx := c.Context()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	sub, err := cl.WatchApplication(ctx, o.name(name), o.nsOf(name))
	if err != nil {
		return nil, timedOut(c, err)
	}
	defer sub.Close()
	var last *client.AppDetail
	for {
		r, err := sub.Next()
		if err != nil {
			return last, timedOut(c, err)
		}
		last = nil
		if r.Application != nil {
			last = &r.Application.AppDetail
		}
		ok, err := done(last)
		if err != nil || ok {
			return last, err
		}
	}
}

// timedOut turns the end of a wait's own deadline into errWaitTimeout.
func timedOut(c *cobra.Command, err error) error {
	if errors.Is(err, context.DeadlineExceeded) && c.Context().Err() == nil {
		return errWaitTimeout
	}
	return err
}

// waitGone waits until the application no longer exists. One gone
// before the watch starts is NOT_FOUND to it: that is the end waited for.
func waitGone(c *cobra.Command, o *appOptions, cl *client.Client, name string, timeout time.Duration) error {
	_, err := watchApp(c, o, cl, name, timeout, func(a *client.AppDetail) (bool, error) { return a == nil, nil })
	if errors.Is(err, errWaitTimeout) {
		return notAsExpected(fmt.Errorf("application %q is still there after %s", name, timeout))
	}
	if client.HasCode(err, client.CodeNotFound) {
		return nil
	}
	return err
}

// waitFor is what app wait waits for.
type waitFor struct{ sync, health, operation bool }

// met reports whether a is in the state w asks for.
func (w waitFor) met(a *client.AppDetail) bool {
	return (!w.sync || a.Status.Sync.Status == client.SyncStatusCodeSynced) &&
		(!w.health || a.Status.Health.Status == client.HealthStatusCodeHealthy) &&
		(!w.operation || !operationRunning(a))
}

func operationRunning(a *client.AppDetail) bool {
	return a.Operation != nil || (a.Status.OperationState != nil && a.Status.OperationState.FinishedAt == nil)
}

// describe says where a stands, for a timeout's message.
func describe(a *client.AppDetail) string {
	if a == nil {
		return "not seen yet"
	}
	s := fmt.Sprintf("sync %s, health %s", a.Status.Sync.Status, a.Status.Health.Status)
	if operationRunning(a) {
		s += ", an operation is running"
	}
	return s
}

func newAppWaitCmd(o *appOptions) *cobra.Command {
	var w waitFor
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until an application is synced, healthy and has no operation running (exit 1 on timeout)",
		Long: `Wait until an application is in the state asked for: synced (--sync),
healthy (--health), without a running operation (--operation); all three
when none is given. The state comes from the API's subscription, so the
wait ends as soon as the controller reports it. Exits 1 when --timeout
passes first, 2 when the application does not exist or is deleted.`,
		Example:           `  graphcd app wait guestbook --health --timeout 5m`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if !w.sync && !w.health && !w.operation {
				w = waitFor{sync: true, health: true, operation: true}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			name := args[0]
			a, err := watchApp(c, o, cl, name, timeout, func(a *client.AppDetail) (bool, error) {
				if a == nil {
					return false, notFound(name)
				}
				return w.met(a), nil
			})
			if errors.Is(err, errWaitTimeout) {
				return notAsExpected(fmt.Errorf("timed out after %s waiting for application %q: %s", timeout, name, describe(a)))
			}
			if err != nil {
				return err
			}
			return printWaited(c.OutOrStdout(), o.output.String(), a)
		}),
	}
	f := c.Flags()
	f.BoolVar(&w.sync, "sync", false, "wait until the application is Synced")
	f.BoolVar(&w.health, "health", false, "wait until the application is Healthy")
	f.BoolVar(&w.operation, "operation", false, "wait until no operation is running")
	f.DurationVar(&timeout, "timeout", 0, "give up after this long (exit code 1); 0 waits forever")
	return c
}

func printWaited(w io.Writer, format string, a *client.AppDetail) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, a)
	case "name":
		_, err := fmt.Fprintln(w, a.Name)
		return err
	}
	_, err := fmt.Fprintf(w, "application %q: %s\n", a.Name, describe(a))
	return err
}

// operationOptions are the flags of commands that start an operation.
type operationOptions struct {
	async   bool
	timeout time.Duration
}

func (op *operationOptions) addFlags(c *cobra.Command) {
	c.Flags().BoolVar(&op.async, "async", false, "do not wait for the operation to end")
	c.Flags().DurationVar(&op.timeout, "timeout", 0, "give up waiting for the operation after this long (exit code 1); 0 waits forever")
}

// finish waits, unless --async, for the operation just requested to end
// and reports it; prev is the application as the mutation returned it.
// A failed operation exits 1.
func (op *operationOptions) finish(c *cobra.Command, o *appOptions, cl *client.Client, prev *client.AppSummary, what string) error {
	if op.async {
		return printChanged(c.OutOrStdout(), o.output.String(), prev, what+" requested")
	}
	// The operation requested is the application's `operation` until the
	// controller ends it; its operationState then has a start other than
	// the previous operation's.
	var prevStart *time.Time
	if s := prev.Status.OperationState; s != nil {
		prevStart = &s.StartedAt
	}
	pending := false
	// The app as the API named it: its namespace wins over --app-namespace.
	a, err := watchApp(c, o, cl, qualified(prev.Namespace, prev.Name), op.timeout, func(a *client.AppDetail) (bool, error) {
		if a == nil {
			return false, notFound(prev.Name)
		}
		if a.Operation != nil {
			pending = true
			return false, nil
		}
		s := a.Status.OperationState
		if s == nil || s.FinishedAt == nil {
			return false, nil
		}
		return pending || prevStart == nil || !s.StartedAt.Equal(*prevStart), nil
	})
	if errors.Is(err, errWaitTimeout) {
		return notAsExpected(fmt.Errorf("timed out after %s waiting for the %s of %q: %s", op.timeout, what, prev.Name, describe(a)))
	}
	if err != nil {
		return err
	}
	s := a.Status.OperationState
	if err := printOperation(c.OutOrStdout(), o.output.String(), a); err != nil {
		return err
	}
	if s.Phase != client.OperationPhaseSucceeded {
		return notAsExpected(fmt.Errorf("%s of %q %s: %s", what, a.Name, s.Phase, s.Message))
	}
	return nil
}

func printOperation(w io.Writer, format string, a *client.AppDetail) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, a)
	case "name":
		_, err := fmt.Fprintln(w, a.Name)
		return err
	}
	s := a.Status.OperationState
	kv := command.NewTable(w, "Name:", a.Name)
	kv.Row("Operation:", string(s.Phase))
	kv.Row("Message:", s.Message)
	if r := s.SyncResult; r != nil {
		kv.Row("Revision:", r.Revision)
	}
	kv.Row("Sync Status:", string(a.Status.Sync.Status))
	kv.Row("Health Status:", string(a.Status.Health.Status))
	if err := kv.Flush(); err != nil {
		return err
	}
	if s.SyncResult == nil || len(s.SyncResult.Resources) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	t := command.NewTable(w, "GROUP", "KIND", "NAMESPACE", "NAME", "STATUS", "HOOK", "MESSAGE")
	for _, r := range s.SyncResult.Resources {
		hook := "" // plain resources carry the phase Running too, as in Argo CD: only hooks show it
		if r.HookType != "" {
			hook = r.HookType + " " + r.HookPhase
		}
		t.Row(r.Group, r.Kind, r.Namespace, r.Name, r.Status, hook, r.Message)
	}
	return t.Flush()
}

// parseResource reads --resource GROUP:KIND:NAME or
// GROUP:KIND:NAMESPACE/NAME (an empty group is the core group).
func parseResource(s string) (client.SyncResourceInput, error) {
	parts := strings.SplitN(s, ":", 3)
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return client.SyncResourceInput{}, fmt.Errorf("--resource %q: want GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME", s)
	}
	r := client.SyncResourceInput{Group: parts[0], Kind: parts[1], Name: parts[2]}
	if ns, name, ok := strings.Cut(parts[2], "/"); ok {
		r.Namespace, r.Name = ns, name
	}
	return r, nil
}

func newAppSyncCmd(o *appOptions) *cobra.Command {
	var (
		op        operationOptions
		revision  string
		source    int
		prune     bool
		dryRun    bool
		force     bool
		resources []string
		local     localOptions
	)
	c := &cobra.Command{
		Use:   "sync NAME",
		Short: "Sync an application and wait for the sync to end (exit 1 when it fails)",
		Example: `  graphcd app sync guestbook
  graphcd app sync guestbook --prune --revision v1.2.0
  graphcd app sync web --revision 9f1c2e4 --source-position 2
  graphcd app sync guestbook --resource apps:Deployment:guestbook-ui --async
  graphcd app sync guestbook --local ./manifests --prune`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			in := client.SyncApplicationInput{Application: o.ref(args[0]), Prune: prune, DryRun: dryRun, Force: force}
			if revision != "" {
				in.Revision = &revision
			}
			if source != 0 {
				in.SourcePosition = &source
			}
			for _, s := range resources {
				r, err := parseResource(s)
				if err != nil {
					return &command.UsageError{Cmd: c, Err: err}
				}
				in.Resources = append(in.Resources, r)
			}
			objs, err := local.read(c)
			if err != nil {
				return err
			}
			if objs != nil {
				if revision != "" {
					return &command.UsageError{Cmd: c, Err: errors.New("--local and --revision exclude each other")}
				}
				if in.Manifests, err = localManifests(objs); err != nil {
					return err
				}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.SyncApplication(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			return op.finish(c, o, cl, &resp.SyncApplication.AppSummary, "sync")
		}),
	}
	op.addFlags(c)
	f := c.Flags()
	f.StringVar(&revision, "revision", "", "sync to this revision rather than the target revision")
	f.IntVar(&source, "source-position", 0, "the source --revision applies to, from 1, for a multi-source application; the first when 0")
	f.BoolVar(&prune, "prune", false, "delete resources that are no longer in Git")
	f.BoolVar(&dryRun, "dry-run", false, "preview only: change nothing")
	f.BoolVar(&force, "force", false, "delete and re-create resources that cannot be patched")
	f.StringArrayVar(&resources, "resource", nil, "sync only this resource, as GROUP:KIND:NAME or GROUP:KIND:NAMESPACE/NAME (repeatable)")
	local.addFlags(c, "sync the manifests of this file or directory instead of the source (needs the override right; not with automated sync)")
	return c
}

func newAppRollbackCmd(o *appOptions) *cobra.Command {
	var (
		op     operationOptions
		prune  bool
		dryRun bool
	)
	c := &cobra.Command{
		Use:               "rollback NAME ID",
		Short:             "Sync an application back to the revision of a history entry (see app history)",
		Args:              cliArgs(2, "NAME", "ID"),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			id, err := strconv.Atoi(args[1])
			if err != nil {
				return &command.UsageError{Cmd: c, Err: fmt.Errorf("history ID %q: want a number", args[1])}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			in := client.RollbackApplicationInput{Application: o.ref(args[0]), Id: id, Prune: prune, DryRun: dryRun}
			resp, err := client.RollbackApplication(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			return op.finish(c, o, cl, &resp.RollbackApplication.AppSummary, "rollback")
		}),
	}
	op.addFlags(c)
	c.Flags().BoolVar(&prune, "prune", false, "delete resources the old revision does not have")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "preview only: change nothing")
	return c
}

func newAppTerminateOpCmd(o *appOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "terminate-op NAME",
		Short:             "Stop an application's running operation",
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.TerminateOperation(c.Context(), cl.GraphQL, o.ref(args[0]))
			if err != nil {
				return err
			}
			return printChanged(c.OutOrStdout(), o.output.String(), &resp.TerminateOperation.AppSummary, "operation terminating")
		}),
	}
}

func newAppHistoryCmd(o *appOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "history NAME",
		Short:             "List an application's deployments, oldest first",
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
			h := app.Status.History
			w := c.OutOrStdout()
			switch f := o.output.String(); f {
			case "json", "yaml":
				if h == nil {
					h = h[:0:0]
				}
				return printStructured(w, f, h)
			case "name":
				for _, e := range h {
					if _, err := fmt.Fprintln(w, e.Id); err != nil {
						return err
					}
				}
				return nil
			}
			t := command.NewTable(w, "ID", "DEPLOYED", "REVISION", "SOURCE", "BY")
			for _, e := range h {
				by := e.InitiatedBy.Username
				if e.InitiatedBy.Automated {
					by = "automated"
				}
				src := strings.TrimSpace(e.Source.RepoURL + " " + e.Source.Path)
				t.Row(strconv.Itoa(e.Id), e.DeployedAt.Format(time.RFC3339), e.Revision, src, by)
			}
			return t.Flush()
		}),
	}
}

func newAppDiffCmd(o *appOptions) *cobra.Command {
	var local localOptions
	c := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show how the live resources differ from Git, or from local manifests (exit 1 when they do, 0 when not)",
		Long: `Show how an application's live resources differ from the desired state
the controller last compared with, or, with --local, from the manifests of
a local file or directory (plain YAML and JSON). Exits 0 when nothing
differs, 1 when something does, 2 on errors.`,
		Example: `  graphcd app diff guestbook
  graphcd app diff guestbook --local ./manifests
  kustomize build overlays/prod > /tmp/prod.yaml && graphcd app diff guestbook --local /tmp/prod.yaml`,
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			objs, err := local.read(c)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if objs != nil {
				return diffAgainstLocal(c, o, cl, args[0], objs)
			}
			resp, err := client.ApplicationDiff(c.Context(), cl.GraphQL, o.name(args[0]), o.nsOf(args[0]))
			if err != nil {
				return err
			}
			if resp.Application == nil {
				return notFound(args[0])
			}
			var differ []client.ApplicationDiffApplicationManagedResourcesManagedResource
			for _, r := range resp.Application.ManagedResources {
				if r.Diff != "" || r.Status == client.SyncStatusCodeOutofsync {
					differ = append(differ, r)
				}
			}
			w := c.OutOrStdout()
			switch f := o.output.String(); f {
			case "json", "yaml":
				if differ == nil {
					differ = differ[:0:0]
				}
				err = printStructured(w, f, differ)
			case "name":
				for _, r := range differ {
					if _, err = fmt.Fprintf(w, "%s:%s:%s\n", r.Group, r.Kind, qualified(r.Namespace, r.Name)); err != nil {
						break
					}
				}
			default:
				for _, r := range differ {
					if _, err = fmt.Fprintf(w, "===== %s/%s %s ======\n%s\n", r.Group, r.Kind, qualified(r.Namespace, r.Name), r.Diff); err != nil {
						break
					}
				}
			}
			if err != nil {
				return err
			}
			if len(differ) > 0 {
				return command.ExitCodeError{Code: ExitNotAsExpected}
			}
			return nil
		}),
	}
	local.addFlags(c, "compare with the manifests of this file or directory instead of Git")
	return c
}

// diffAgainstLocal is app diff --local: the live resources against objs.
func diffAgainstLocal(c *cobra.Command, o *appOptions, cl *client.Client, arg string, objs []localObject) error {
	resp, err := client.ApplicationLive(c.Context(), cl.GraphQL, o.name(arg), o.nsOf(arg))
	if err != nil {
		return err
	}
	if resp.Application == nil {
		return notFound(arg)
	}
	diffs, err := diffLocal(resp.Application, objs)
	if err != nil {
		return err
	}
	if err := printLocalDiffs(c.OutOrStdout(), o.output.String(), diffs); err != nil {
		return err
	}
	if len(diffs) > 0 {
		return command.ExitCodeError{Code: ExitNotAsExpected}
	}
	return nil
}

func qualified(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

func newAppEventsCmd(o *appOptions) *cobra.Command {
	var first int
	c := &cobra.Command{
		Use:               "events NAME",
		Short:             "List the Kubernetes Events about an application, newest first",
		Args:              appArgs(o),
		ValidArgsFunction: completeApps(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.ApplicationEvents(c.Context(), cl.GraphQL, o.name(args[0]), o.nsOf(args[0]), first)
			if err != nil {
				return err
			}
			if resp.Application == nil {
				return notFound(args[0])
			}
			ev := resp.Application.Events
			w := c.OutOrStdout()
			switch f := o.output.String(); f {
			case "json", "yaml":
				if ev == nil {
					ev = ev[:0:0]
				}
				return printStructured(w, f, ev)
			}
			t := command.NewTable(w, "TIME", "TYPE", "REASON", "COUNT", "MESSAGE")
			for _, e := range ev {
				when := ""
				if e.Time != nil {
					when = e.Time.Format(time.RFC3339)
				}
				t.Row(when, e.Type, e.Reason, strconv.Itoa(e.Count), e.Note)
			}
			return t.Flush()
		}),
	}
	c.Flags().IntVar(&first, "first", 50, "how many events, at most 500")
	return c
}
