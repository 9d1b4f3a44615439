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

func newAccountCmd() *cobra.Command {
	return newAPIGroup("account", "Manage local accounts: list, get, update-password, generate-token, delete-token",
		func(o *apiOptions) []*cobra.Command {
			return []*cobra.Command{newAccountListCmd(o), newAccountGetCmd(o), newAccountUpdatePasswordCmd(o),
				newAccountGenerateTokenCmd(o), newAccountDeleteTokenCmd(o)}
		})
}

type account = client.ListAccountsAccountsAccount

func listAccounts(c *cobra.Command, o *apiOptions) ([]account, error) {
	cl, err := o.connect()
	if err != nil {
		return nil, err
	}
	resp, err := client.ListAccounts(c.Context(), cl.GraphQL)
	if err != nil {
		return nil, err
	}
	return resp.Accounts, nil
}

func completeAccounts(o *apiOptions) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		accounts, err := listAccounts(c, o)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		names := make([]string, 0, len(accounts))
		for _, a := range accounts {
			names = append(names, a.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

func newAccountListCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the local accounts you may see",
		Args:  command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			accounts, err := listAccounts(c, o)
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			switch f := o.output.String(); f {
			case "json", "yaml":
				if accounts == nil {
					accounts = []account{}
				}
				return printStructured(w, f, accounts)
			case "name":
				for _, a := range accounts {
					if err := printNames(w, a.Name); err != nil {
						return err
					}
				}
				return nil
			}
			t := command.NewTable(w, "NAME", "ENABLED", "CAPABILITIES", "TOKENS")
			for _, a := range accounts {
				t.Row(a.Name, yesNo(a.Enabled), strings.Join(a.Capabilities, ","), fmt.Sprint(len(a.Tokens)))
			}
			return t.Flush()
		}),
	}
}

func newAccountGetCmd(o *apiOptions) *cobra.Command {
	return &cobra.Command{
		Use:               "get [NAME]",
		Short:             "Show an account (yours when NAME is not given) and its API tokens",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeAccounts(o),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			name := ""
			if len(args) == 1 {
				name = args[0]
			} else {
				me, err := client.Me(c.Context(), cl.GraphQL)
				if err != nil {
					return err
				}
				if !me.Me.LoggedIn {
					return fmt.Errorf("not logged in (%s); log in with graphcd login SERVER", client.CodeUnauthenticated)
				}
				name = me.Me.Username
			}
			resp, err := client.ListAccounts(c.Context(), cl.GraphQL)
			if err != nil {
				return err
			}
			for i := range resp.Accounts {
				if a := &resp.Accounts[i]; a.Name == name {
					return printAccount(c.OutOrStdout(), o.output.String(), a)
				}
			}
			return fmt.Errorf("account %q not found (%s)", name, client.CodeNotFound)
		}),
	}
}

func printAccount(w io.Writer, format string, a *account) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, a)
	case "name":
		return printNames(w, a.Name)
	}
	kv := command.NewTable(w, "Name:", a.Name)
	kv.Row("Enabled:", yesNo(a.Enabled))
	kv.Row("Capabilities:", strings.Join(a.Capabilities, ", "))
	changed := "never"
	if a.PasswordChangedAt != nil {
		changed = a.PasswordChangedAt.Format(time.RFC3339)
	}
	kv.Row("Password Changed:", changed)
	if err := kv.Flush(); err != nil {
		return err
	}
	if len(a.Tokens) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	t := command.NewTable(w, "TOKEN ID", "ISSUED", "EXPIRES")
	for _, tok := range a.Tokens {
		t.Row(tok.Id, tok.IssuedAt.Format(time.RFC3339), expiry(tok.ExpiresAt))
	}
	return t.Flush()
}

func newAccountUpdatePasswordCmd(o *apiOptions) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "update-password",
		Short: "Change a local account's password (yours unless --account); its sessions end",
		Long: `Change a local account's password: yours, or with --account another's
(which needs the update right on it). Either way the server checks your
own current password. Both passwords are asked for when stdin is a
terminal; otherwise stdin's first line is your current password and its
second the new one. Every session of the account ends, yours too when it
is yours: log in again.`,
		Example: `  graphcd account update-password
  printf '%s\n%s\n' "$CURRENT" "$NEW" | graphcd account update-password --account ci`,
		Args:              command.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			s := newSecrets(c, c.ErrOrStderr())
			current, err := s.ask("current password")
			if err != nil {
				return err
			}
			next, err := s.ask("new password")
			if err != nil {
				return err
			}
			if s.tty {
				again, err := s.ask("new password again")
				if err != nil {
					return err
				}
				if again != next {
					return errors.New("the new passwords differ")
				}
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			in := client.UpdatePasswordInput{Account: optional(name), CurrentPassword: current, NewPassword: next}
			if _, err := client.UpdatePassword(c.Context(), cl.GraphQL, in); err != nil {
				return err
			}
			who := name
			if who == "" {
				who = "your account"
			} else {
				who = fmt.Sprintf("account %q", who)
			}
			return printDone(c.OutOrStdout(), o.output.String(), name, "password of "+who+" changed; its sessions have ended")
		}),
	}
	c.Flags().StringVar(&name, "account", "", "the account; yours when empty")
	return c
}

func newAccountGenerateTokenCmd(o *apiOptions) *cobra.Command {
	var name, id, expiresIn string
	c := &cobra.Command{
		Use:   "generate-token",
		Short: "Issue an API token for an account with the apiKey capability and print it (it is shown this once)",
		Long: `Issue an API token for a local account with the apiKey capability:
yours, or with --account another's (which needs the update right on it).
The token is printed alone, for $(...); -o json prints {id, token,
issuedAt, expiresAt}. graphcd keeps only its ID.`,
		Example: `  export GRAPHCD_AUTH_TOKEN=$(graphcd account generate-token --account ci --expires-in 720h)
  graphcd account generate-token --account ci --id pipeline -o json`,
		Args: command.NoArgs,
		RunE: cliRun(func(c *cobra.Command, _ []string) error {
			expires, err := checkDuration(c, "expires-in", expiresIn)
			if err != nil {
				return err
			}
			cl, err := o.connect()
			if err != nil {
				return err
			}
			in := client.CreateAccountTokenInput{Account: optional(name), Id: optional(id), ExpiresIn: expires}
			resp, err := client.CreateAccountToken(c.Context(), cl.GraphQL, in)
			if err != nil {
				return err
			}
			return printToken(c.OutOrStdout(), o.output.String(), &resp.CreateAccountToken.IssuedToken)
		}),
	}
	c.Flags().StringVar(&name, "account", "", "the account; yours when empty")
	c.Flags().StringVar(&id, "id", "", "the token's ID, unique within the account; random when empty")
	c.Flags().StringVar(&expiresIn, "expires-in", "", "how long the token is valid, e.g. 720h; it never expires when empty")
	return c
}

func newAccountDeleteTokenCmd(o *apiOptions) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "delete-token ID",
		Short: "Revoke an account's API token at once",
		Args:  cliArgs(1, "ID"),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cl, err := o.connect()
			if err != nil {
				return err
			}
			if _, err := client.DeleteAccountToken(c.Context(), cl.GraphQL, optional(name), args[0]); err != nil {
				return err
			}
			return printDone(c.OutOrStdout(), o.output.String(), args[0], fmt.Sprintf("token %q deleted", args[0]))
		}),
	}
	c.Flags().StringVar(&name, "account", "", "the account; yours when empty")
	return c
}
