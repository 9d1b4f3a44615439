package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/reposerver/remote"
)

// repoServerClientOptions are the flags that point `graphcd server` at a
// separate `graphcd repo-server` instead of rendering in process.
type repoServerClientOptions struct {
	addr, caFile, certFile, keyFile string
	serverName                      string
	insecure, plaintext             bool
}

func (o *repoServerClientOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.addr, "repo-server-addr", "", "host:port of a `graphcd repo-server` to render with (default: render in process)")
	f.StringVar(&o.caFile, "repo-server-ca-file", "", "PEM CA (or the repo-server's self-signed certificate) to trust")
	f.StringVar(&o.certFile, "repo-server-client-cert", "", "PEM client certificate for a repo-server that requires mutual TLS")
	f.StringVar(&o.keyFile, "repo-server-client-key", "", "PEM key of --repo-server-client-cert")
	f.StringVar(&o.serverName, "repo-server-tls-server-name", "", "name to verify the repo-server's certificate against, when --repo-server-addr reaches it by another name or an IP (default: the host of --repo-server-addr)")
	f.BoolVar(&o.insecure, "repo-server-insecure", false, "do not verify the repo-server's certificate (encrypted, not authenticated)")
	f.BoolVar(&o.plaintext, "repo-server-plaintext", false, "talk to the repo-server without TLS (requests with credentials are refused)")
}

// dial connects to the configured repo-server, or returns nil when none is
// configured. The connection is lazy: readiness reports whether it answers.
func (o *repoServerClientOptions) dial(c *cobra.Command) (*remote.Client, error) {
	if o.addr == "" {
		return nil, nil
	}
	if (o.certFile == "") != (o.keyFile == "") {
		return nil, fmt.Errorf("%s and %s must be given together", command.FlagOrigin(c, "repo-server-client-cert"), command.FlagOrigin(c, "repo-server-client-key"))
	}
	opts := remote.ClientOptions{Insecure: o.insecure, Plaintext: o.plaintext, ServerName: o.serverName}
	for _, f := range []struct {
		flag, path string
		dst        *[]byte
	}{{"repo-server-ca-file", o.caFile, &opts.CACert}, {"repo-server-client-cert", o.certFile, &opts.ClientCert}, {"repo-server-client-key", o.keyFile, &opts.ClientKey}} {
		if f.path == "" {
			continue
		}
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, f.flag), err)
		}
		*f.dst = b
	}
	client, err := remote.Dial(o.addr, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", command.FlagOrigin(c, "repo-server-addr"), err)
	}
	return client, nil
}

// readyWithRepoServer adds "the repo-server answers its health check" to a
// readiness check.
func readyWithRepoServer(ready func(context.Context) error, client *remote.Client) func(context.Context) error {
	if client == nil {
		return ready
	}
	return func(ctx context.Context) error {
		if err := ready(ctx); err != nil {
			return err
		}
		if err := client.Check(ctx); err != nil {
			return fmt.Errorf("repo-server unreachable: %w", err)
		}
		return nil
	}
}
