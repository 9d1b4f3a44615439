// Package cli is graphcd's user CLI: the commands that talk to a graphcd
// server over its GraphQL API (login, logout, context, app, appset, proj,
// repo, repocreds, cluster, account), through the typed client of package
// client only, so that it links neither the controller, the resolvers,
// the repository server nor the auth internals.
//
// The configuration file (contexts, sessions) is client.Config; every
// flag that chooses the server also reads GRAPHCD_<FLAG>, so CI needs no
// login: GRAPHCD_SERVER and GRAPHCD_AUTH_TOKEN. Exit codes: 0 when all
// went as asked, 1 (ExitNotAsExpected) when the command worked but the
// outcome is not the one asked for, 2 (ExitError) for errors.
package cli

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// The exit codes of the client commands (login, context, app ...):
// 0 when all went as asked, 1 when the command worked but the outcome is
// not the one asked for (app wait timed out, app diff found differences,
// a sync failed), 2 for errors, usage errors included.
const (
	ExitNotAsExpected = 1
	ExitError         = 2
)

// Commands returns the commands that talk to a graphcd server over its
// API, for the graphcd root command to mount.
func Commands() []*cobra.Command {
	return []*cobra.Command{newLoginCmd(), newLogoutCmd(), newContextCmd(), newAppCmd(), newApplicationSetCmd(),
		newProjCmd(), newRepoCmd(), newRepoCredsCmd(), newClusterCmd(), newAccountCmd(), newAuditCmd()}
}

// cliOptions are the flags that choose the server and credentials; each
// overrides the configuration file.
type cliOptions struct {
	configPath  string
	contextName string
	server      string
	authToken   string
	insecure    bool
	serverCrt   string
}

// addConfigFlags adds the flags every client command has.
func (o *cliOptions) addConfigFlags(f *pflag.FlagSet) {
	f.StringVar(&o.configPath, "config", "", "the CLI configuration file; else $XDG_CONFIG_HOME/graphcd/config or ~/.config/graphcd/config")
}

// addServerFlags adds the flags that choose whom to talk to.
func (o *cliOptions) addServerFlags(f *pflag.FlagSet) {
	o.addConfigFlags(f)
	f.StringVar(&o.contextName, "context", "", "the context (server) to use; else the current one")
	f.StringVar(&o.server, "server", "", "the graphcd server's URL, overriding the context's")
	f.StringVar(&o.authToken, "auth-token", "", "a bearer token (an API token for CI), overriding the context's session")
	o.addTLSFlags(f)
}

// addTLSFlags adds --insecure and --server-crt.
func (o *cliOptions) addTLSFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.insecure, "insecure", false, "do not verify the server's TLS certificate (only for a server you trust, with a self-signed certificate)")
	f.StringVar(&o.serverCrt, "server-crt", "", "PEM file of the server's certificate, or of the CA that signed it, to verify it with instead of the system's roots")
}

// tls says how to verify the server: the flags, else what ctx (nil when
// none) was logged in with.
func (o *cliOptions) tls(ctx *client.Context) (client.TLS, error) {
	t := client.TLS{Insecure: o.insecure}
	crt := o.serverCrt
	if ctx != nil {
		t.Insecure = t.Insecure || ctx.Insecure
		if crt == "" {
			crt = ctx.ServerCrt
		}
	}
	if crt != "" {
		pem, err := os.ReadFile(crt)
		if err != nil {
			return client.TLS{}, fmt.Errorf("--server-crt: %w", err)
		}
		t.CACert = pem
	}
	return t, nil
}

// config loads the configuration file and returns it with its path.
func (o *cliOptions) config() (*client.Config, string, error) {
	path := o.configPath
	if path == "" {
		var err error
		if path, err = client.ConfigPath(); err != nil {
			return nil, "", err
		}
	}
	cfg, err := client.LoadConfig(path)
	return cfg, path, err
}

// connect returns a client of the chosen server: --server, else the
// context's, with --auth-token, else the context's session.
func (o *cliOptions) connect() (*client.Client, error) {
	cfg, _, err := o.config()
	if err != nil {
		return nil, err
	}
	server := ""
	if o.server != "" {
		if server, err = serverURL(o.server); err != nil {
			return nil, err
		}
	}
	var ctx *client.Context
	switch {
	case o.contextName != "":
		if ctx = cfg.Context(o.contextName); ctx == nil {
			return nil, fmt.Errorf("no context %q; see graphcd context", o.contextName)
		}
	case server == "":
		ctx = cfg.Current()
	default:
		for i := range cfg.Contexts {
			if cfg.Contexts[i].Server == server {
				ctx = &cfg.Contexts[i]
				break
			}
		}
	}
	if server == "" {
		if ctx == nil {
			return nil, errors.New("no server: run graphcd login SERVER, or give --server (GRAPHCD_SERVER)")
		}
		server = ctx.Server
	}
	token := o.authToken
	if ctx != nil && ctx.Server != server {
		ctx = nil // --server names another server than the context's
	}
	if ctx != nil && token == "" {
		token = ctx.Token
	}
	t, err := o.tls(ctx)
	if err != nil {
		return nil, err
	}
	return client.NewTLS(server, token, t)
}

// serverURL accepts a server as a URL or as host[:port], which means
// https.
func serverURL(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("server %q: want https://HOST[:PORT] or http://HOST[:PORT]", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// cliRun adapts a client command's function to cobra: errors exit 2 with
// the API's message and code, unless they carry their own exit code.
func cliRun(run func(c *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		err := run(c, args)
		if err == nil {
			return nil
		}
		if _, ok := errors.AsType[command.ExitCodeError](err); ok {
			return err
		}
		if _, ok := errors.AsType[*command.UsageError](err); ok {
			return err // exits 2 with a pointer to --help
		}
		err = client.Explain(err)
		if client.HasCode(err, client.CodeUnauthenticated) {
			err = fmt.Errorf("%w; log in with graphcd login SERVER, or give a valid --auth-token", err)
		}
		if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
			err = fmt.Errorf("%w; give the server's certificate (or its CA) with --server-crt, or, if you trust this server, pass --insecure to skip the check", err)
		}
		return command.ExitCodeError{Code: ExitError, Err: err}
	}
}

// notAsExpected ends a command with exit code 1 and err's message.
func notAsExpected(err error) error {
	return command.ExitCodeError{Code: ExitNotAsExpected, Err: err}
}

// cliArgs checks the number of positional arguments as a usage error.
func cliArgs(n int, names ...string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return &command.UsageError{Cmd: c, Err: fmt.Errorf("%q wants %d argument(s) (%s), got %d", c.CommandPath(), n, strings.Join(names, " "), len(args))}
		}
		return nil
	}
}

// outputFormats are the values of -o.
var outputFormats = []string{"table", "wide", "json", "yaml", "name"}

// newOutput returns the -o flag's value.
func newOutput() *command.Enum { return command.NewEnum("table", outputFormats...) }

// printStructured prints v as JSON or YAML, as the API's field names
// spell them.
func printStructured(w io.Writer, format string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format == "yaml" {
		if raw, err = yaml.JSONToYAML(raw); err != nil {
			return err
		}
		_, err = w.Write(raw)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", raw)
	return err
}
