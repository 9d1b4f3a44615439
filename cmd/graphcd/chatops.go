package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/chatops"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

func newChatopsCmd(root *rootOptions) *cobra.Command {
	o := &chatops.Options{}
	metrics := &metricsListener{}
	c := &cobra.Command{
		Use:   "chatops",
		Short: "Run the chat bot: post failures and held syncs to a chat, answer /sync and /approve",
		Long: `Run graphcd's chat bot, a client of the API with a token of its own.

It posts failed syncs, degraded applications and syncs waiting for
approval to a Slack-compatible incoming webhook, and serves the Slack slash
commands "/sync APP [NAMESPACE]" and "/approve APP [NAMESPACE]" on
POST /slack/command (and /healthz for probes). Every command must carry
Slack's signature. --config maps Slack users to graphcd users and groups:
an approval is made on behalf of the mapped user, and with --config set
unmapped users are refused.

The secrets may come from the environment instead of files: the token in
GRAPHCD_TOKEN, the signing secret in SLACK_SIGNING_SECRET. CHAT_WEBHOOK_URL,
SLACK_SIGNING_SECRET_FILE and LISTEN are read too when the flags are not
set. See docs/chatops.md.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			cfg, err := chatops.Load(*o, os.Getenv, os.ReadFile)
			if err != nil {
				return err
			}
			if err := metrics.validate(c.Context(), c); err != nil {
				return err
			}
			if err := metrics.serve(c.Context(), c, root.log); err != nil {
				return err
			}
			return chatops.Run(c.Context(), cfg, root.log)
		},
	}
	f := c.Flags()
	f.StringVar(&o.Server, "server", "", "graphcd's base URL, such as https://graphcd.example.com")
	f.StringVar(&o.ServerCAFile, "server-ca-file", "", "PEM file of graphcd's certificate or its CA, when the system does not trust it")
	f.StringVar(&o.TokenFile, "token-file", "", "file holding the bot's token")
	f.StringVar(&o.WebhookURL, "webhook-url", "", "the chat's Slack-compatible incoming webhook URL (a secret; prefer the environment)")
	f.StringVar(&o.SigningSecretFile, "signing-secret-file", "", "file holding Slack's signing secret")
	f.StringVar(&o.Listen, "listen", "", "address of POST /slack/command and /healthz (default "+chatops.DefaultListen+")")
	f.StringVar(&o.ConfigFile, "config", "", "identity file (YAML) mapping Slack users to graphcd users and groups")
	metrics.addFlags(c, defaultChatopsMetricsListen, false)
	return c
}
