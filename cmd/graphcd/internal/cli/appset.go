package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// appsetOptions are the flags of every appset subcommand.
type appsetOptions struct {
	cliOptions
	namespace string
	output    *command.Enum
}

// previewFirst is how many elements appset preview asks for: enough for
// most sets, within the server's cost limit for its selection.
const previewFirst = 1000

func newApplicationSetCmd() *cobra.Command {
	o := &appsetOptions{output: newOutput()}
	c := &cobra.Command{
		Use:     "appset",
		Aliases: []string{"appsets", "applicationset"},
		Short:   "Manage ApplicationSets: list, get, create, delete, preview",
		Long: `Manage ApplicationSets through the graphcd API. A set is NAME, or
NAMESPACE/NAME for a set outside the server's namespace (as
--appset-namespace says). Manifests may be Argo CD's (argoproj.io/v1alpha1)
or graphcd's (graphcd.io/v1alpha1).

Exit codes: 0 when all went as asked; 1 when appset preview finds
elements that fail; 2 for errors, such as an unknown set (NOT_FOUND) or a
refused request (FORBIDDEN).`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	f := c.PersistentFlags()
	o.addServerFlags(f)
	f.StringVar(&o.namespace, "appset-namespace", "", "the namespace of the ApplicationSet objects; the server's own when empty")
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(outputFormats, ", "))
	c.AddCommand(newApplicationSetListCmd(o), newApplicationSetGetCmd(o), newApplicationSetCreateCmd(o), newApplicationSetDeleteCmd(o), newApplicationSetPreviewCmd(o))
	return c
}

// appsetArgs accepts one set argument, NAME or NAMESPACE/NAME.
func appsetArgs(o *appsetOptions) cobra.PositionalArgs {
	return namespacedArgs("applicationset", "--appset-namespace", &o.namespace)
}

// completeAppSets completes a set name from the server's list.
func completeAppSets(o *appsetOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		sets, err := listAppSets(c, o, &client.ApplicationSetFilter{Search: &prefix})
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, s := range sets {
			if strings.HasPrefix(s.Name, prefix) {
				names = append(names, s.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func listAppSets(c *cobra.Command, o *appsetOptions, filter *client.ApplicationSetFilter) ([]client.AppSetSummary, error) {
	cl, err := o.connect()
	if err != nil {
		return nil, err
	}
	return allPages(func(after *string) ([]client.AppSetSummary, client.PageFields, error) {
		resp, err := client.ListApplicationSets(c.Context(), cl.GraphQL, ListPageSize, after, filter)
		if err != nil {
			return nil, client.PageFields{}, err
		}
		nodes := make([]client.AppSetSummary, 0, len(resp.ApplicationSets.Nodes))
		for _, n := range resp.ApplicationSets.Nodes {
			nodes = append(nodes, n.AppSetSummary)
		}
		return nodes, resp.ApplicationSets.PageInfo.PageFields, nil
	})
}

func newApplicationSetListCmd(o *appsetOptions) *cobra.Command {
	var projects []string
	c := &cobra.Command{
		Use:   "list",
		Short: "List the ApplicationSets you may see",
		Example: `  graphcd appset list
  graphcd appset list --project web -o wide`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			filter := &client.ApplicationSetFilter{Projects: projects}
			if o.namespace != "" {
				filter.Namespaces = []string{o.namespace}
			}
			sets, err := listAppSets(c, o, filter)
			if err != nil {
				return err
			}
			return printAppSetList(c.OutOrStdout(), o.output.String(), sets)
		}),
	}
	c.Flags().StringSliceVarP(&projects, "project", "p", nil, "only the sets of these projects")
	return c
}

func printAppSetList(w io.Writer, format string, sets []client.AppSetSummary) error {
	switch format {
	case "json", "yaml":
		if sets == nil {
			sets = []client.AppSetSummary{}
		}
		return printStructured(w, format, sets)
	case "name":
		for _, s := range sets {
			if err := printNames(w, s.Name); err != nil {
				return err
			}
		}
		return nil
	}
	wide := format == "wide"
	headers := []string{"NAME", "NAMESPACE", "PROJECT", "SYNCPOLICY", "APPLICATIONS", "CONDITIONS"}
	if wide {
		headers = append(headers, "GENERATORS", "TEMPLATE", "REPO", "PATH", "TARGET")
	}
	t := command.NewTable(w, headers...)
	for _, s := range sets {
		row := []string{s.Name, s.Namespace, s.Project, syncPolicyOf(s.Spec.SyncPolicy),
			strconv.Itoa(s.Status.ResourcesCount), orNone(conditionsOf(s.Status.Conditions))}
		if wide {
			repo, path, target := templateSource(s.Spec.Template.Spec.Source, s.Spec.Template.Spec.Sources)
			row = append(row, orNone(strings.Join(generatorKinds(s.Spec.Generators), ",")), s.Spec.Template.Name, repo, path, target)
		}
		t.Row(row...)
	}
	return t.Flush()
}

// syncPolicyOf is a set's applicationsSync policy.
func syncPolicyOf(p *client.AppSetSummarySpecApplicationSetSpecSyncPolicyApplicationSetSyncPolicy) string {
	if p == nil {
		return "sync"
	}
	return p.ApplicationsSync
}

// conditionsOf lists the conditions that need a look: errors that
// occurred, and the others that are not true.
func conditionsOf(cs []client.AppSetSummaryStatusApplicationSetStatusConditionsApplicationSetCondition) string {
	var out []string
	for _, c := range cs {
		if (c.Type == "ErrorOccurred") == (c.Status == "True") {
			out = append(out, c.Type)
		}
	}
	return strings.Join(out, ",")
}

// generatorKinds names the generators of a set's generators JSON, in
// order: list, clusters, git, matrix, merge ...
func generatorKinds(generators string) []string {
	var gens []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(generators), &gens); err != nil {
		return nil
	}
	out := make([]string, 0, len(gens))
	for _, g := range gens {
		keys := make([]string, 0, len(g))
		for k := range g {
			if k != "selector" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		out = append(out, strings.Join(keys, "+"))
	}
	return out
}

// templateSource is the repository, path and revision of a template's
// (first) source.
func templateSource(src *client.AppSetSummarySpecApplicationSetSpecTemplateApplicationSetTemplateSpecApplicationSpecSourceApplicationSource,
	srcs []client.AppSetSummarySpecApplicationSetSpecTemplateApplicationSetTemplateSpecApplicationSpecSourcesApplicationSource) (repo, path, target string) {
	switch {
	case src != nil:
		return src.RepoURL, src.Path, src.TargetRevision
	case len(srcs) > 0:
		return fmt.Sprintf("%s (+%d)", srcs[0].RepoURL, len(srcs)-1), srcs[0].Path, srcs[0].TargetRevision
	}
	return "", "", ""
}

func newApplicationSetGetCmd(o *appsetOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "get NAME",
		Short:             "Show an ApplicationSet: its generators and template, its conditions, and what it generated",
		Args:              appsetArgs(o),
		ValidArgsFunction: completeAppSets(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.GetApplicationSet(c.Context(), cl.GraphQL, nameOf(args[0]), namespaceOf(args[0], o.namespace))
			if err != nil {
				return err
			}
			if resp.ApplicationSet == nil {
				return fmt.Errorf("applicationset %q not found (%s)", args[0], client.CodeNotFound)
			}
			return printAppSet(c.OutOrStdout(), o.output.String(), &resp.ApplicationSet.AppSetDetail)
		}),
	}
}

func printAppSet(w io.Writer, format string, s *client.AppSetDetail) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, s)
	case "name":
		return printNames(w, s.Name)
	}
	kv := command.NewTable(w, "Name:", s.Name)
	kv.Row("Namespace:", s.Namespace)
	kv.Row("Project:", s.Project)
	kv.Row("Generators:", orNone(strings.Join(generatorKinds(s.Spec.Generators), ", ")))
	tmpl := s.Spec.Template
	kv.Row("Template:", tmpl.Name)
	if src := tmpl.Spec.Source; src != nil {
		kv.Row("Repo:", src.RepoURL)
		kv.Row("Path:", src.Path)
		kv.Row("Target:", src.TargetRevision)
	}
	for i, src := range tmpl.Spec.Sources {
		kv.Row(fmt.Sprintf("Source %d:", i+1), strings.Join([]string{src.RepoURL, src.Path, src.TargetRevision, src.Chart}, " "))
	}
	d := tmpl.Spec.Destination
	kv.Row("Destination:", destination(d.Server, d.Name, d.Namespace))
	policy := "sync"
	if p := s.Spec.SyncPolicy; p != nil {
		policy = p.ApplicationsSync
		if p.PreserveResourcesOnDeletion {
			policy += " (preserving resources on deletion)"
		}
	}
	kv.Row("Sync Policy:", policy)
	if s.Spec.Strategy != nil {
		kv.Row("Strategy:", *s.Spec.Strategy)
	}
	kv.Row("Applications:", strconv.Itoa(s.Status.ResourcesCount))
	if s.Deleting {
		kv.Row("Deleting:", "yes")
	}
	if err := kv.Flush(); err != nil {
		return err
	}
	if len(s.Status.Conditions) > 0 {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		t := command.NewTable(w, "CONDITION", "STATUS", "REASON", "MESSAGE")
		for _, c := range s.Status.Conditions {
			t.Row(c.Type, c.Status, c.Reason, command.OneLine(c.Message))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(s.Status.Generated) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	health := map[string][2]string{}
	for _, r := range s.Status.Resources {
		h := ""
		if r.Health != nil {
			h = string(r.Health.Status)
		}
		health[r.Name] = [2]string{string(r.Status), h}
	}
	t := command.NewTable(w, "APPLICATION", "GENERATOR", "ACTION", "SYNC", "HEALTH", "PARAMS", "MESSAGE")
	for _, g := range s.Status.Generated {
		gen := strconv.Itoa(g.Generator)
		if g.Generator < 0 {
			gen = "-"
		}
		st := health[g.Name]
		t.Row(orNone(g.Name), gen, string(g.Action), st[0], st[1], g.Params, command.OneLine(g.Message))
	}
	return t.Flush()
}

func newApplicationSetCreateCmd(o *appsetOptions) *cobra.Command {
	var file string
	var upsert bool
	c := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create ApplicationSets from their manifests (graphcd.io or argoproj.io ApplicationSets, YAML documents or JSON)",
		Example: `  graphcd appset create -f guestbook-set.yaml
  kubectl get applicationset guestbook -n argocd -o yaml | graphcd appset create -f - --upsert`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			manifest, err := readManifest(c, file)
			if err != nil {
				return err
			}
			docs := yamlDocuments(manifest)
			if len(docs) == 0 {
				return &command.UsageError{Cmd: c, Err: fmt.Errorf("%s holds no manifest", file)}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			var created []client.AppSetSummary
			for _, doc := range docs {
				resp, err := client.CreateApplicationSet(c.Context(), cl.GraphQL, client.CreateApplicationSetInput{Manifest: doc, Upsert: upsert})
				if err != nil {
					return err
				}
				s := resp.CreateApplicationSet.AppSetSummary
				created = append(created, s)
				if f := o.output.String(); f != "json" && f != "yaml" {
					if err := printDone(c.OutOrStdout(), f, s.Name, fmt.Sprintf("applicationset %q created", s.Name)); err != nil {
						return err
					}
				}
			}
			if f := o.output.String(); f == "json" || f == "yaml" {
				if len(created) == 1 {
					return printStructured(c.OutOrStdout(), f, created[0])
				}
				return printStructured(c.OutOrStdout(), f, created)
			}
			return nil
		}),
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the ApplicationSet manifests; - for stdin")
	c.Flags().BoolVar(&upsert, "upsert", false, "update a set when one of that name exists")
	return c
}

// readManifest reads the -f file of c; none is a usage error.
func readManifest(c *cobra.Command, file string) (string, error) {
	if file == "" {
		return "", &command.UsageError{Cmd: c, Err: errors.New("give the manifest with -f FILE (- for stdin)")}
	}
	b, err := command.ReadInput(c, file)
	return string(b), err
}

// yamlDocuments splits a YAML stream at its document markers ("---" at
// the start of a line, which always starts a document), leaving out the
// documents that hold nothing but comments.
func yamlDocuments(stream string) []string {
	var docs []string
	var cur strings.Builder
	flush := func() {
		doc := cur.String()
		cur.Reset()
		for line := range strings.Lines(doc) {
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				docs = append(docs, doc)
				return
			}
		}
	}
	for line := range strings.Lines(stream) {
		if rest, ok := strings.CutPrefix(line, "---"); ok && (strings.TrimSpace(rest) == "" || strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t")) {
			flush()
			if t := strings.TrimSpace(rest); t != "" && !strings.HasPrefix(t, "#") {
				cur.WriteString(strings.TrimLeft(rest, " \t")) // "--- {...}": the document starts on the marker's line
			}
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return docs
}

func newApplicationSetDeleteCmd(o *appsetOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Short:             "Delete an ApplicationSet, and with it the Applications it generated (and their resources, unless its policy preserves them)",
		Args:              appsetArgs(o),
		ValidArgsFunction: completeAppSets(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteApplicationSet(c.Context(), cl.GraphQL, nameOf(args[0]), namespaceOf(args[0], o.namespace)); err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[0], fmt.Sprintf("applicationset %q deleted", args[0]))
		}),
	}
}

func newApplicationSetPreviewCmd(o *appsetOptions) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:   "preview -f FILE",
		Short: "Show the Applications an ApplicationSet manifest would generate, without writing anything",
		Long: `Generate the Applications of an ApplicationSet manifest on the server, as
its controller would, and check each against its project; nothing is
written (Argo CD's appset generate). Elements that fail are listed on
stderr with their generator, parameters and reason, and the command then
exits 1. The clusters generator sees the clusters you may see; git and
clusterDecisionResource generators are not run through the API yet.`,
		Example: `  graphcd appset preview -f guestbook-set.yaml
  graphcd appset preview -f guestbook-set.yaml -o yaml`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			manifest, err := readManifest(c, file)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.PreviewApplicationSet(c.Context(), cl.GraphQL, client.DryRunApplicationSetInput{Manifest: manifest}, previewFirst)
			if err != nil {
				return err
			}
			p := &resp.DryRunApplicationSet
			if err := printPreview(c.OutOrStdout(), o.output.String(), p); err != nil {
				return err
			}
			return previewOutcome(c.ErrOrStderr(), p)
		}),
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the ApplicationSet manifest; - for stdin")
	return c
}

func printPreview(w io.Writer, format string, p *client.PreviewApplicationSetDryRunApplicationSetApplicationSetPreview) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, p)
	case "name":
		for _, e := range p.Elements {
			if e.Application != nil && e.Error == nil {
				if err := printNames(w, e.Application.Name); err != nil {
					return err
				}
			}
		}
		return nil
	}
	wide := format == "wide"
	headers := []string{"NAME", "NAMESPACE", "PROJECT", "DESTINATION", "REPO", "PATH", "TARGET"}
	if wide {
		headers = append(headers, "GENERATOR", "PARAMS")
	}
	t := command.NewTable(w, headers...)
	for _, e := range p.Elements {
		a := e.Application
		if a == nil || e.Error != nil {
			continue
		}
		repo, path, target := "", "", ""
		if s := a.Spec.Source; s != nil {
			repo, path, target = s.RepoURL, s.Path, s.TargetRevision
		} else if len(a.Spec.Sources) > 0 {
			repo, path, target = fmt.Sprintf("%s (+%d)", a.Spec.Sources[0].RepoURL, len(a.Spec.Sources)-1), a.Spec.Sources[0].Path, a.Spec.Sources[0].TargetRevision
		}
		d := a.Spec.Destination
		row := []string{a.Name, a.Namespace, a.Project, destination(d.Server, d.Name, d.Namespace), repo, path, target}
		if wide {
			row = append(row, strconv.Itoa(e.Generator), e.Params)
		}
		t.Row(row...)
	}
	return t.Flush()
}

// previewOutcome reports on stderr the elements that fail and those the
// answer left out, and is the exit status: 1 when an element fails.
func previewOutcome(stderr io.Writer, p *client.PreviewApplicationSetDryRunApplicationSetApplicationSetPreview) error {
	for i, e := range p.Elements {
		if e.Error == nil {
			continue
		}
		name := ""
		if e.Application != nil {
			name = " (" + e.Application.Name + ")"
		}
		if _, err := fmt.Fprintf(stderr, "element %d of generator %d %s%s: %s\n", i, e.Generator, e.Params, name, command.OneLine(*e.Error)); err != nil {
			return err
		}
	}
	if left := p.TotalCount - len(p.Elements); left > 0 {
		if _, err := fmt.Fprintf(stderr, "%d more elements not shown (the first %d are)\n", left, len(p.Elements)); err != nil {
			return err
		}
	}
	if p.FailedCount > 0 {
		return notAsExpected(fmt.Errorf("%d of %d elements fail", p.FailedCount, p.TotalCount))
	}
	return nil
}
