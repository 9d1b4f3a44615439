package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

type loginOptions struct {
	cliOptions
	name          string
	username      string
	password      string
	passwordStdin bool
	sso           bool
}

func newLoginCmd() *cobra.Command {
	o := &loginOptions{cliOptions: cliOptions{}}
	c := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a graphcd server and make it the current context",
		Long: `Log in to a graphcd server with a local account's password, or with --sso
through the server's single sign-on (its embedded Dex) in a browser. The
session is kept in the configuration file (mode 0600) as a context named
after the server, which becomes the current one.

The password is asked for when stdin is a terminal; scripts pass it with
--password-stdin. For CI, skip login: set GRAPHCD_SERVER and
GRAPHCD_AUTH_TOKEN (an API token) instead.`,
		Example: `  graphcd login cd.example.com --username admin
  echo "$PASSWORD" | graphcd login https://cd.example.com --username admin --password-stdin
  graphcd login cd.example.com --sso`,
		Args: cliArgs(1, "SERVER"),
		RunE: cliRun(func(c *cobra.Command, args []string) error { return runLogin(c, o, args[0]) }),
	}
	f := c.Flags()
	o.addConfigFlags(f)
	f.StringVar(&o.name, "name", "", "the context's name; the server's host[:port] when empty")
	f.StringVar(&o.username, "username", "", "the local account; asked for when stdin is a terminal")
	f.StringVar(&o.password, "password", "", "the password (visible to other users of the machine: prefer the prompt or --password-stdin)")
	f.BoolVar(&o.passwordStdin, "password-stdin", false, "read the password from the first line of stdin")
	f.BoolVar(&o.sso, "sso", false, "log in through single sign-on in a browser (a loopback redirect to this machine)")
	o.addTLSFlags(f)
	return c
}

func runLogin(c *cobra.Command, o *loginOptions, arg string) error {
	server, err := serverURL(arg)
	if err != nil {
		return &command.UsageError{Cmd: c, Err: err}
	}
	cfg, path, err := o.config()
	if err != nil {
		return err
	}
	if o.serverCrt != "" {
		// The context keeps the file's path, for every later command.
		if o.serverCrt, err = filepath.Abs(o.serverCrt); err != nil {
			return err
		}
	}
	t, err := o.tls(nil)
	if err != nil {
		return err
	}
	anon, err := client.NewTLS(server, "", t)
	if err != nil {
		return err
	}
	var (
		s    client.Session
		user string
	)
	if o.sso {
		s, err = ssoLogin(c.Context(), anon, c.ErrOrStderr())
	} else {
		user, err = o.credentials(c)
		if err != nil {
			return err
		}
		s, err = anon.Login(c.Context(), user, o.password)
	}
	if err != nil {
		return err
	}
	// Ask who the session is: SSO names the user only here, and it proves
	// the token works with the API.
	authed, err := client.NewTLS(server, s.Token, t)
	if err != nil {
		return err
	}
	me, err := client.Me(c.Context(), authed.GraphQL)
	if err != nil {
		return err
	}
	user = me.Me.Username
	name := o.name
	if name == "" {
		u, _ := url.Parse(server)
		name = u.Host
	}
	ctx := client.Context{Name: name, Server: server, User: user, Token: s.Token, Insecure: o.insecure, ServerCrt: o.serverCrt}
	if !s.ExpiresAt.IsZero() {
		ctx.ExpiresAt = &s.ExpiresAt
	}
	cfg.Put(ctx)
	if err := cfg.Save(path); err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.OutOrStdout(), "logged in to %s as %s (context %q)\n", server, user, name)
	return err
}

// credentials returns the username and fills in the password from stdin
// or a prompt.
func (o *loginOptions) credentials(c *cobra.Command) (string, error) {
	in := c.InOrStdin()
	tty := isTerminal(in)
	user := o.username
	var lines *bufio.Reader
	if user == "" {
		if !tty {
			return "", &command.UsageError{Cmd: c, Err: errors.New("give --username (stdin is not a terminal to ask on)")}
		}
		lines = bufio.NewReader(in)
		_, _ = fmt.Fprint(c.ErrOrStderr(), "Username: ")
		line, err := lines.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("read the username: %w", err)
		}
		user = strings.TrimSpace(line)
	}
	switch {
	case o.passwordStdin && o.password != "":
		return "", &command.UsageError{Cmd: c, Err: errors.New("give --password or --password-stdin, not both")}
	case o.passwordStdin:
		line, err := bufio.NewReader(io.LimitReader(in, 4<<10)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the password from stdin: %w", err)
		}
		o.password = strings.TrimRight(line, "\r\n")
	case o.password != "":
	case tty:
		_, _ = fmt.Fprint(c.ErrOrStderr(), "Password: ")
		pw, err := term.ReadPassword(int(in.(*os.File).Fd())) //nolint:gosec,forcetypeassert // isTerminal checked it is an *os.File; fds fit an int
		_, _ = fmt.Fprintln(c.ErrOrStderr())
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		o.password = string(pw)
	default:
		return "", &command.UsageError{Cmd: c, Err: errors.New("give the password with --password-stdin (stdin is not a terminal to ask on)")}
	}
	return user, nil
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) //nolint:gosec // fds fit an int
}

// ssoLogin logs in through the server's single sign-on, printing the
// login URL on stderr and opening it in a browser when there is one.
func ssoLogin(ctx context.Context, c *client.Client, stderr io.Writer) (client.Session, error) {
	return c.LoginSSO(ctx, func(loginURL string) error {
		_, _ = fmt.Fprintf(stderr, "Open this URL in a browser to log in:\n\n  %s\n\n", loginURL)
		openBrowser(ctx, loginURL)
		return nil
	})
}

// openBrowser tries xdg-open when there is a display; the URL is printed
// anyway.
func openBrowser(ctx context.Context, u string) {
	if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	if bin, err := exec.LookPath("xdg-open"); err == nil {
		cmd := exec.CommandContext(context.WithoutCancel(ctx), bin, u)
		if cmd.Start() == nil {
			go func() { _ = cmd.Wait() }()
		}
	}
}

func newLogoutCmd() *cobra.Command {
	o := &cliOptions{}
	c := &cobra.Command{
		Use:   "logout [CONTEXT]",
		Short: "End the session of a context (the current one when none is named)",
		Args:  cobra.MaximumNArgs(1),
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cfg, path, err := o.config()
			if err != nil {
				return err
			}
			ctx := cfg.Current()
			if len(args) == 1 {
				ctx = cfg.Context(args[0])
			}
			if ctx == nil {
				return errors.New("no such context; see graphcd context")
			}
			if ctx.Token != "" {
				t, err := o.tls(ctx)
				if err != nil {
					return err
				}
				cl, err := client.NewTLS(ctx.Server, ctx.Token, t)
				if err != nil {
					return err
				}
				if err := cl.Logout(c.Context()); err != nil {
					return err
				}
			}
			ctx.Token, ctx.ExpiresAt = "", nil
			if err := cfg.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "logged out of %s\n", ctx.Server)
			return err
		}),
	}
	o.addConfigFlags(c.Flags())
	return c
}

func newContextCmd() *cobra.Command {
	o := &cliOptions{}
	var remove bool
	c := &cobra.Command{
		Use:     "context [NAME]",
		Aliases: []string{"ctx"},
		Short:   "List the contexts (servers logged in to), or switch to one",
		Example: `  graphcd context
  graphcd context cd.example.com
  graphcd context --delete old.example.com`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			cfg, _, err := o.config()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []string
			for _, x := range cfg.Contexts {
				names = append(names, x.Name)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: cliRun(func(c *cobra.Command, args []string) error {
			cfg, path, err := o.config()
			if err != nil {
				return err
			}
			if len(args) == 0 {
				if remove {
					return &command.UsageError{Cmd: c, Err: errors.New("--delete wants the context's name")}
				}
				t := command.NewTable(c.OutOrStdout(), "CURRENT", "NAME", "SERVER", "USER", "LOGGED IN")
				for _, x := range cfg.Contexts {
					cur := ""
					if x.Name == cfg.CurrentContext {
						cur = "*"
					}
					t.Row(cur, x.Name, x.Server, x.User, yesNo(x.Token != ""))
				}
				return t.Flush()
			}
			if cfg.Context(args[0]) == nil {
				return fmt.Errorf("no context %q; see graphcd context", args[0])
			}
			msg := "switched to context %q\n"
			if remove {
				cfg.Remove(args[0])
				msg = "deleted context %q\n"
			} else {
				cfg.CurrentContext = args[0]
			}
			if err := cfg.Save(path); err != nil {
				return err
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), msg, args[0])
			return err
		}),
	}
	o.addConfigFlags(c.Flags())
	c.Flags().BoolVar(&remove, "delete", false, "delete the named context rather than switch to it")
	return c
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
