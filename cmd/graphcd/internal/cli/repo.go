package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newRepoCmd() *cobra.Command {
	return newAPIGroup("repo", "Manage the repositories applications deploy from: list, add, rm",
		func(o *apiOptions) []*cobra.Command {
			return []*cobra.Command{newRepoListCmd(o, false), newRepoAddCmd(o, false), newRepoRmCmd(o, false)}
		})
}

func newRepoCredsCmd() *cobra.Command {
	return newAPIGroup("repocreds", "Manage credential templates for every repository under a URL prefix: list, add, rm",
		func(o *apiOptions) []*cobra.Command {
			return []*cobra.Command{newRepoListCmd(o, true), newRepoAddCmd(o, true), newRepoRmCmd(o, true)}
		})
}

// repoNoun names a repository or a template in messages.
func repoNoun(template bool) string {
	if template {
		return "credential template"
	}
	return "repository"
}

// listRepos returns the repositories, or with template the credential
// templates.
func listRepos(c *cobra.Command, o *apiOptions, template bool) ([]client.RepositorySummary, error) {
	cl, err := o.connect()
	if err != nil {
		return nil, err
	}
	all, err := allPages(func(after *string) ([]client.RepositorySummary, client.PageFields, error) {
		resp, err := client.ListRepositories(c.Context(), cl.GraphQL, ListPageSize, after)
		if err != nil {
			return nil, client.PageFields{}, err
		}
		nodes := make([]client.RepositorySummary, 0, len(resp.Repositories.Nodes))
		for _, n := range resp.Repositories.Nodes {
			nodes = append(nodes, n.RepositorySummary)
		}
		return nodes, resp.Repositories.PageInfo.PageFields, nil
	})
	if err != nil {
		return nil, err
	}
	repos := []client.RepositorySummary{}
	for _, r := range all {
		if r.Template == template {
			repos = append(repos, r)
		}
	}
	return repos, nil
}

func completeRepos(o *apiOptions, template bool) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		repos, err := listRepos(c, o, template)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		urls := make([]string, 0, len(repos))
		for _, r := range repos {
			urls = append(urls, r.Url)
		}
		return urls, cobra.ShellCompDirectiveNoFileComp
	}
}

func newRepoListCmd(o *apiOptions, template bool) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the " + repoNoun(template) + "s (credentials are never shown)",
		Args:  command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			repos, err := listRepos(c, o, template)
			if err != nil {
				return err
			}
			return printRepos(c.OutOrStdout(), o.output.String(), repos)
		}),
	}
}

func printRepos(w io.Writer, format string, repos []client.RepositorySummary) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, repos)
	case "name":
		for _, r := range repos {
			if err := printNames(w, r.Url); err != nil {
				return err
			}
		}
		return nil
	}
	t := command.NewTable(w, "URL", "TYPE", "NAME", "PROJECT", "CREDENTIALS")
	for _, r := range repos {
		t.Row(r.Url, r.Type, r.Name, r.Project, yesNo(r.HasCredentials))
	}
	return t.Flush()
}

// repoFlags are the flags of repo add and repocreds add.
type repoFlags struct {
	username, sshKeyPath, repoType, name, project string
	passwordStdin, insecure, enableOCI            bool
	upsert, skipTest                              bool
}

func newRepoAddCmd(o *apiOptions, template bool) *cobra.Command {
	var f repoFlags
	use, example := "add URL", `  graphcd repo add https://github.com/example/apps.git
  echo "$GIT_TOKEN" | graphcd repo add https://git.example.com/web.git --username ci --password-stdin
  graphcd repo add git@github.com:example/apps.git --ssh-private-key-path ~/.ssh/deploy
  graphcd repo add https://charts.example.com --type helm --name example`
	if template {
		use, example = "add URL-PREFIX", `  echo "$GIT_TOKEN" | graphcd repocreds add https://git.example.com/team/ --username ci --password-stdin
  graphcd repocreds add git@github.com:example/ --ssh-private-key-path ~/.ssh/deploy`
	}
	c := &cobra.Command{
		Use: use,
		Short: map[bool]string{
			false: "Declare a repository, with its credentials; the server reaches it first unless --skip-test",
			true:  "Declare credentials for every repository whose URL starts with URL-PREFIX",
		}[template],
		Long: `Credentials never come from flags: the password (or token) is read
from stdin with --password-stdin, or asked for when --username is given and
stdin is a terminal; the SSH key from --ssh-private-key-path.`,
		Example: example,
		Args:    cliArgs(1, map[bool]string{false: "URL", true: "URL-PREFIX"}[template]),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			in, err := f.input(c, o, args[0])
			if err != nil {
				return err
			}
			in.Template = template
			cl, err := o.connect()
			if err != nil {
				return err
			}
			resp, err := client.CreateRepository(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			r := &resp.CreateRepository.RepositorySummary
			if format := o.output.String(); format == "json" || format == "yaml" {
				return printStructured(c.OutOrStdout(), format, r)
			}
			return printDone(c.OutOrStdout(), o.output.String(), r.Url, fmt.Sprintf("%s %q added", repoNoun(template), r.Url))
		}),
	}
	fs := c.Flags()
	fs.StringVar(&f.username, "username", "", "the HTTPS user name")
	fs.BoolVar(&f.passwordStdin, "password-stdin", false, "read the HTTPS password or token from the first line of stdin")
	fs.StringVar(&f.sshKeyPath, "ssh-private-key-path", "", "a file with the SSH private key (PEM)")
	fs.BoolVar(&f.insecure, "insecure-skip-server-verification", false, "do not verify the repository's TLS certificate (Argo CD's flag; --insecure is about the graphcd server)")
	fs.StringVar(&f.repoType, "type", "", "git (the default), helm, or oci (OCI artifacts holding manifests)")
	fs.StringVar(&f.name, "name", "", "a display name (Helm repositories need one)")
	fs.StringVar(&f.project, "project", "", "the only project that may use it (its RBAC object is <project>/<url>)")
	fs.BoolVar(&f.enableOCI, "enable-oci", false, "a Helm URL without a scheme is an OCI registry")
	fs.BoolVar(&f.upsert, "upsert", false, "replace an existing declaration of the same URL and project")
	if !template {
		fs.BoolVar(&f.skipTest, "skip-test", false, "save without reaching the repository first")
	}
	return c
}

// input builds the mutation's input, reading the credentials.
func (f *repoFlags) input(c *cobra.Command, o *apiOptions, url string) (client.RepositoryInput, error) {
	in := client.RepositoryInput{Url: url, Type: optional(f.repoType), Name: optional(f.name), Project: optional(f.project),
		Username: optional(f.username), Insecure: f.insecure, EnableOCI: f.enableOCI, Upsert: f.upsert, SkipTest: f.skipTest}
	if f.repoType != "" && f.repoType != "git" && f.repoType != "helm" && f.repoType != "oci" {
		return in, &command.UsageError{Cmd: c, Err: fmt.Errorf("--type %q: want git, helm or oci", f.repoType)}
	}
	s := newSecrets(c, c.ErrOrStderr())
	switch {
	case f.passwordStdin:
		pw, err := s.line("password")
		if err != nil {
			return in, err
		}
		in.Password = &pw
	case f.username != "" && s.tty:
		pw, err := s.ask("password")
		if err != nil {
			return in, err
		}
		in.Password = &pw
	case f.username != "":
		return in, &command.UsageError{Cmd: c, Err: errors.New("give the password with --password-stdin (stdin is not a terminal to ask on)")}
	}
	if f.sshKeyPath != "" {
		key, err := command.ReadInput(c, f.sshKeyPath)
		if err != nil {
			return in, err
		}
		k := string(key)
		in.SshPrivateKey = &k
	}
	return in, nil
}

// scopedOnly explains notFound, the answer to removing the global
// declaration of url, when the caller can see project-scoped ones of that
// URL: they are removed with --project.
func scopedOnly(c *cobra.Command, o *apiOptions, template bool, url string, notFound error) error {
	repos, err := listRepos(c, o, template)
	if err != nil {
		return notFound
	}
	var projects []string
	for _, r := range repos {
		if r.Url == url && r.Project != "" {
			projects = append(projects, r.Project)
		}
	}
	if len(projects) == 0 {
		return notFound
	}
	return fmt.Errorf("%s %q has no global declaration; it is scoped to project %s: remove it with --project %s (%s)",
		repoNoun(template), url, strings.Join(projects, ", "), projects[0], client.CodeNotFound)
}

func newRepoRmCmd(o *apiOptions, template bool) *cobra.Command {
	arg := map[bool]string{false: "URL", true: "URL-PREFIX"}[template]
	var project string
	cmd := &cobra.Command{
		Use:               "rm " + arg,
		Aliases:           []string{"remove"},
		Short:             "Remove a " + repoNoun(template) + " and its credentials",
		Args:              cliArgs(1, arg),
		ValidArgsFunction: completeRepos(o, template),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteRepository(c.Context(), cl.GraphQL, args[0], template, optional(project)); err != nil {
				if project == "" && client.HasCode(err, client.CodeNotFound) {
					return scopedOnly(c, o, template, args[0], err)
				}
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[0], fmt.Sprintf("%s %q removed", repoNoun(template), args[0]))
		}),
	}
	cmd.Flags().StringVar(&project, "project", "", "remove the one scoped to this project (the global one without)")
	return cmd
}
