package main

import (
	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/reposerver/render/plugin"
)

func newCMPServerCmd(root *rootOptions) *cobra.Command {
	o := plugin.ServerOptions{}
	metrics := &metricsListener{}
	c := &cobra.Command{
		Use:   "cmp-server",
		Short: "Serve a config-management plugin to the repository server over a Unix socket",
		Long: `Run one config-management plugin (an Argo CD ConfigManagementPlugin
plugin.yaml) as a sidecar: listen on <socket-dir>/<plugin-name>.sock, receive
each app's repository as a tarball, run the plugin's init and generate
commands in a fresh directory with a minimal environment (ARGOCD_APP_*,
ARGOCD_ENV_*/GRAPHCD_ENV_* user variables, PARAM_* parameters) and return the
manifests. Point the repository server at the same --socket-dir.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Logger = root.log
			if err := metrics.validate(c.Context(), c); err != nil {
				return err
			}
			if err := metrics.serve(c.Context(), c, root.log); err != nil {
				return err
			}
			return plugin.Serve(c.Context(), o)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Config, "config", plugin.DefaultConfigPath, "path of the plugin.yaml")
	f.StringVar(&o.SocketDir, "socket-dir", plugin.DefaultSocketDir, "directory for the plugin's Unix socket, shared with the repository server")
	f.DurationVar(&o.Timeout, "timeout", plugin.DefaultTimeout, "limit for one init + generate run")
	f.StringVar(&o.WorkDir, "work-dir", "", "where each call's repository is unpacked (default: the temp directory)")
	f.Int64Var(&o.MaxRepoSize, "max-repo-size", plugin.DefaultMaxRepoSize, "largest repository tarball accepted, in bytes")
	f.IntVar(&o.MaxRepoFiles, "max-repo-files", plugin.DefaultMaxRepoFiles, "most files in a repository tarball")
	f.Int64Var(&o.MaxOutputSize, "max-output-size", plugin.DefaultMaxOutputSize, "largest generate output, in bytes")
	f.StringArrayVar(&o.PassEnv, "pass-env", nil, "server environment variable the plugin may see (repeatable)")
	metrics.addFlags(c, defaultCMPServerMetricsListen, false)
	return c
}
