package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newProjCmd() *cobra.Command {
	return newAPIGroup("proj", "Manage projects (AppProjects), their role tokens and sync windows: list, get, create, set-spec, delete, role token, windows",
		func(o *apiOptions) []*cobra.Command {
			return []*cobra.Command{newProjListCmd(o), newProjGetCmd(o), newProjCreateCmd(o), newProjSetSpecCmd(o),
				newProjDeleteCmd(o), newProjRoleCmd(o), newProjWindowsCmd(o)}
		})
}

// completeProjects completes a project name from the server's list.
func completeProjects(o *apiOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		projects, err := listProjects(c, o)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		var names []string
		for _, p := range projects {
			if strings.HasPrefix(p.Name, prefix) {
				names = append(names, p.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func listProjects(c *cobra.Command, o *apiOptions) ([]client.ProjectSummary, error) {
	cl, err := o.connect()
	if err != nil {
		return nil, err
	}
	return allPages(func(after *string) ([]client.ProjectSummary, client.PageFields, error) {
		resp, err := client.ListProjects(c.Context(), cl.GraphQL, ListPageSize, after)
		if err != nil {
			return nil, client.PageFields{}, err
		}
		nodes := make([]client.ProjectSummary, 0, len(resp.Projects.Nodes))
		for _, n := range resp.Projects.Nodes {
			nodes = append(nodes, n.ProjectSummary)
		}
		return nodes, resp.Projects.PageInfo.PageFields, nil
	})
}

func newProjListCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List projects",
		Args:  command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			projects, err := listProjects(c, o)
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			switch f := o.output.String(); f {
			case "json", "yaml":
				if projects == nil {
					projects = []client.ProjectSummary{}
				}
				return printStructured(w, f, projects)
			case "name":
				for _, p := range projects {
					if err := printNames(w, p.Name); err != nil {
						return err
					}
				}
				return nil
			}
			t := command.NewTable(w, "NAME", "DESCRIPTION", "SOURCES", "DESTINATIONS", "ROLES")
			for _, p := range projects {
				t.Row(p.Name, p.Spec.Description, orNone(strings.Join(p.Spec.SourceRepos, ",")),
					orNone(projectDestinations(p.Spec.Destinations)), orNone(strings.Join(roleNames(p.Spec.Roles), ",")))
			}
			return t.Flush()
		}),
	}
}

func projectDestinations(ds []client.ProjectSummarySpecProjectSpecDestinationsApplicationDestination) string {
	s := make([]string, 0, len(ds))
	for _, d := range ds {
		s = append(s, destination(d.Server, d.Name, d.Namespace))
	}
	return strings.Join(s, ",")
}

func roleNames(rs []client.ProjectSummarySpecProjectSpecRolesProjectRole) []string {
	s := make([]string, 0, len(rs))
	for _, r := range rs {
		s = append(s, r.Name)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newProjGetCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "get NAME",
		Short:             "Show a project: sources, destinations, roles and their tokens",
		Args:              cliArgs(1, "NAME"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.GetProject(c.Context(), cl.GraphQL, args[0])
			if err != nil {
				return err
			}
			if resp.Project == nil {
				return fmt.Errorf("project %q not found (%s)", args[0], client.CodeNotFound)
			}
			return printProject(c.OutOrStdout(), o.output.String(), &resp.Project.ProjectSummary)
		}),
	}
}

func printProject(w io.Writer, format string, p *client.ProjectSummary) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, p)
	case "name":
		return printNames(w, p.Name)
	}
	kv := command.NewTable(w, "Name:", p.Name)
	kv.Row("Namespace:", p.Namespace)
	kv.Row("Description:", p.Spec.Description)
	kv.Row("Sources:", orNone(strings.Join(p.Spec.SourceRepos, ", ")))
	kv.Row("Destinations:", orNone(projectDestinations(p.Spec.Destinations)))
	if err := kv.Flush(); err != nil {
		return err
	}
	if len(p.Spec.Roles) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	t := command.NewTable(w, "ROLE", "POLICIES", "GROUPS", "TOKENS")
	for _, r := range p.Spec.Roles {
		tokens := make([]string, 0, len(r.JwtTokens))
		for _, tok := range r.JwtTokens {
			tokens = append(tokens, tok.Id+" (expires "+expiry(tok.ExpiresAt)+")")
		}
		t.Row(r.Name, strconv.Itoa(len(r.Policies)), strings.Join(r.Groups, ","), strings.Join(tokens, ", "))
	}
	return t.Flush()
}

func newProjCreateCmd(o *apiOptions) *cobra.Command {
	var file string
	var upsert bool
	c := &cobra.Command{
		Use:   "create -f FILE",
		Short: "Create a project from its manifest (graphcd.io or argoproj.io AppProject, YAML or JSON)",
		Example: `  graphcd proj create -f web.yaml
  kubectl get appproject web -n argocd -o yaml | graphcd proj create -f - --upsert`,
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
			resp, err := client.CreateProject(c.Context(), cl.GraphQL, client.CreateProjectInput{Manifest: string(manifest), Upsert: upsert})
			if err != nil {
				return err
			}
			return printProjectChanged(c.OutOrStdout(), o.output.String(), &resp.CreateProject.ProjectSummary, "created")
		}),
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the AppProject manifest; - for stdin")
	c.Flags().BoolVar(&upsert, "upsert", false, "update the project when one of that name exists")
	return c
}

func printProjectChanged(w io.Writer, format string, p *client.ProjectSummary, what string) error {
	if format == "json" || format == "yaml" {
		return printStructured(w, format, p)
	}
	return printDone(w, format, p.Name, fmt.Sprintf("project %q %s", p.Name, what))
}

func newProjSetSpecCmd(o *apiOptions) *cobra.Command {
	var file string
	c := &cobra.Command{
		Use:               "set-spec NAME -f FILE",
		Short:             "Replace a project's spec with the content of spec: in FILE (YAML or JSON)",
		Example:           `  graphcd proj set-spec web -f web-spec.yaml`,
		Args:              cliArgs(1, "NAME"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			if file == "" {
				return &command.UsageError{Cmd: c, Err: errors.New("give the spec with -f FILE (- for stdin)")}
			}
			spec, err := command.ReadInput(c, file)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.UpdateProjectSpec(c.Context(), cl.GraphQL, client.UpdateProjectSpecInput{Name: args[0], Spec: string(spec)})
			if err != nil {
				return err
			}
			return printProjectChanged(c.OutOrStdout(), o.output.String(), &resp.UpdateProjectSpec.ProjectSummary, "updated")
		}),
	}
	c.Flags().StringVarP(&file, "file", "f", "", "the spec (what is under spec: in an AppProject); - for stdin")
	return c
}

func newProjDeleteCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "delete NAME",
		Short:             "Delete a project (refused while applications use it)",
		Args:              cliArgs(1, "NAME"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteProject(c.Context(), cl.GraphQL, args[0]); err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[0], fmt.Sprintf("project %q deleted", args[0]))
		}),
	}
}

func newProjRoleCmd(o *apiOptions) *cobra.Command {
	role := &cobra.Command{
		Use:   "role",
		Short: "Manage the tokens of a project's roles",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	token := &cobra.Command{
		Use:   "token",
		Short: "Create or delete a project role's tokens (for CI and bots)",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	token.AddCommand(newProjTokenCreateCmd(o), newProjTokenDeleteCmd(o))
	role.AddCommand(token)
	return role
}

func newProjTokenCreateCmd(o *apiOptions) *cobra.Command {
	var id, expiresIn string
	c := &cobra.Command{
		Use:   "create PROJECT ROLE",
		Short: "Issue a token for a project role and print it (it is shown this once)",
		Long: `Issue a token for a project role: its subject is proj:PROJECT:ROLE, its
rights the role's policies. The token is printed alone, for $(...); -o json
prints {id, token, issuedAt, expiresAt}. graphcd keeps only its ID.`,
		Example: `  export GRAPHCD_AUTH_TOKEN=$(graphcd proj role token create web ci --expires-in 720h)
  graphcd proj role token create web ci --id pipeline -o json`,
		Args:              cliArgs(2, "PROJECT", "ROLE"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			expires, err := checkDuration(c, "expires-in", expiresIn)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			in := client.CreateProjectTokenInput{Project: args[0], Role: args[1], Id: optional(id), ExpiresIn: expires}
			resp, err := client.CreateProjectToken(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			return printToken(c.OutOrStdout(), o.output.String(), &resp.CreateProjectToken.IssuedToken)
		}),
	}
	c.Flags().StringVar(&id, "id", "", "the token's ID, unique within the role; random when empty")
	c.Flags().StringVar(&expiresIn, "expires-in", "", "how long the token is valid, e.g. 720h; it never expires when empty")
	return c
}

func newProjTokenDeleteCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "delete PROJECT ROLE ID",
		Short:             "Revoke a project role's token at once",
		Args:              cliArgs(3, "PROJECT", "ROLE", "ID"),
		ValidArgsFunction: completeProjects(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteProjectToken(c.Context(), cl.GraphQL, args[0], args[1], args[2]); err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[2],
				fmt.Sprintf("token %q of role %q of project %q deleted", args[2], args[1], args[0]))
		}),
	}
}
