package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// auditOptions are the flags of `graphcd audit`.
type auditOptions struct {
	user, project, kind, name, mutation string
	outcome                             *command.Enum
	since                               time.Duration
	limit                               int
	watch                               bool
}

// newAuditCmd returns `graphcd audit`: the audit trail, newest first.
func newAuditCmd() *cobra.Command {
	o := &apiOptions{cliOptions: cliOptions{}, output: newOutput()}
	a := &auditOptions{outcome: command.NewEnum("", "", "success", "failure")}
	c := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit trail: who changed what through the API, from where, and how it ended",
		Long: `Show the audit trail: every mutation made through graphcd's API, newest
first — who (subject and groups), from where (the client address), which
object, what changed (a JSON patch with Secret values redacted) and the
outcome. Reading it needs "get" on the RBAC resource "audit" (role:admin has
it). With --watch, new entries are printed as they are recorded.

Examples:
  graphcd audit --since 1h
  graphcd audit --user alice --project shop -o wide
  graphcd audit --outcome failure --watch
  graphcd audit --limit 1 -o json`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error { return runAudit(c, o, a) }),
	}
	f := c.Flags()
	o.addServerFlags(f)
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(outputFormats, ", "))
	f.StringVar(&a.user, "user", "", "only the mutations of this subject")
	f.StringVar(&a.project, "project", "", "only the mutations of objects of this project")
	f.StringVar(&a.kind, "kind", "", "only the mutations of objects of this kind (Application, AppProject, Secret ...)")
	f.StringVar(&a.name, "name", "", "only the mutations of objects of this name")
	f.StringVar(&a.mutation, "mutation", "", "only this mutation (syncApplication, say)")
	f.Var(a.outcome, "outcome", "only mutations that ended so: success or failure")
	f.DurationVar(&a.since, "since", 0, "only mutations of the last duration (1h, say)")
	f.IntVar(&a.limit, "limit", 100, "at most this many entries (0 for all the server keeps)")
	f.BoolVarP(&a.watch, "watch", "w", false, "after the list, print new entries as they are recorded until interrupted")
	return c
}

// filter is the API's filter of the flags.
func (a *auditOptions) filter(now time.Time) *client.AuditFilter {
	f := &client.AuditFilter{
		User: optional(a.user), Project: optional(a.project), Kind: optional(a.kind),
		Name: optional(a.name), Mutation: optional(a.mutation),
	}
	if v := a.outcome.String(); v != "" {
		out := client.AuditOutcome(strings.ToUpper(v))
		f.Outcome = &out
	}
	if a.since > 0 {
		t := now.Add(-a.since)
		f.Since = &t
	}
	return f
}

func runAudit(c *cobra.Command, o *apiOptions, a *auditOptions) error {
	if a.since < 0 || a.limit < 0 {
		return &command.UsageError{Cmd: c, Err: errors.New("--since and --limit must not be negative")}
	}
	cl, err := o.connect()
	if err != nil {
		return err
	}
	filter := a.filter(time.Now())
	// With --watch the subscription opens before the list is read, so
	// that no entry recorded in between is missed; one recorded since
	// comes twice and is printed once.
	var sub *client.Subscription[client.WatchAuditResponse]
	if a.watch {
		live := *filter
		live.Since = nil
		if sub, err = cl.WatchAudit(c.Context(), &live); err != nil {
			return err
		}
		defer sub.Close()
	}
	var entries []client.AuditFields
	var after *string
	for a.limit == 0 || len(entries) < a.limit {
		first := ListPageSize
		if a.limit > 0 {
			first = min(first, a.limit-len(entries))
		}
		resp, err := client.AuditLog(c.Context(), cl.GraphQL, first, after, filter)
		if err != nil {
			return err
		}
		for _, n := range resp.AuditLog.Nodes {
			entries = append(entries, n.AuditFields)
		}
		info := resp.AuditLog.PageInfo.PageFields
		if !info.HasNextPage || info.EndCursor == nil {
			break
		}
		after = info.EndCursor
	}
	w := c.OutOrStdout()
	format := o.output.String()
	if err := printAudit(w, format, entries, true); err != nil {
		return err
	}
	if sub == nil {
		return nil
	}
	listed := make(map[string]bool, len(entries))
	for _, e := range entries {
		listed[e.Id] = true
	}
	for {
		r, err := sub.Next()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, context.Canceled):
			return nil
		case err != nil:
			return err
		}
		e := r.AuditEvents.AuditFields
		if listed[e.Id] {
			continue
		}
		if err := printAudit(w, format, []client.AuditFields{e}, false); err != nil {
			return err
		}
	}
}

// printAudit prints entries; header says whether a table starts here
// (a watch prints its rows without one). JSON and YAML print a list,
// or while watching one object a line (JSON) or document (YAML).
func printAudit(w io.Writer, format string, entries []client.AuditFields, header bool) error {
	switch format {
	case "json", "yaml":
		if !header {
			if format == "yaml" {
				if _, err := fmt.Fprintln(w, "---"); err != nil {
					return err
				}
			}
			return printStructured(w, format, entries[0])
		}
		if entries == nil {
			entries = []client.AuditFields{}
		}
		return printStructured(w, format, entries)
	case "name":
		for _, e := range entries {
			if err := printNames(w, e.Id); err != nil {
				return err
			}
		}
		return nil
	}
	cols := []string{"TIME", "USER", "MUTATION", "OBJECT", "PROJECT", "OUTCOME"}
	if format == "wide" {
		cols = append(cols, "CLIENT", "OPERATION", "PATCH")
	}
	var t *command.Table
	if header {
		t = command.NewTable(w, cols...)
	}
	for _, e := range entries {
		outcome := string(e.Outcome)
		if e.ErrorCode != nil {
			outcome += " " + *e.ErrorCode
		}
		row := []string{e.Time.Local().Format(time.RFC3339), e.User, e.Mutation, auditObject(e.Object), orNone(e.Object.Project), outcome}
		if format == "wide" {
			patch := "<none>"
			switch {
			case e.PatchOmitted:
				patch = "<too large>"
			case e.Patch != nil:
				patch = *e.Patch
			}
			row = append(row, orNone(deref(e.ClientAddress)), orNone(deref(e.OperationName)), patch)
		}
		for i := range row {
			row[i] = printable(row[i])
		}
		if t == nil {
			// A watched entry: one line as it comes, no columns to align.
			if _, err := fmt.Fprintln(w, strings.Join(row, "   ")); err != nil {
				return err
			}
			continue
		}
		t.Row(row...)
	}
	if t == nil {
		return nil
	}
	return t.Flush()
}

// printable replaces control characters (a client-chosen operation name
// could hold terminal escapes) with U+FFFD.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
}

func auditObject(o client.AuditFieldsObjectAuditObject) string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	return orNone(strings.TrimPrefix(o.Kind+" "+name, " "))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
