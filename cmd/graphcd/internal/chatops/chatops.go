// Package chatops is graphcd's chat bot, "graphcd chatops": it posts
// failed syncs, degraded applications and syncs waiting for approval to a
// Slack-compatible incoming webhook, and answers the slash commands
// "/sync APP [NAMESPACE]" and "/approve APP [NAMESPACE]".
//
// It is a client of graphcd's GraphQL API like any other, with a token of
// its own: it subscribes to applicationEvents over graphql-transport-ws and
// sends mutations over HTTP. Every slash command must carry Slack's v0
// signature; the chat user who sent it is mapped to a graphcd user and
// groups by the identity file (--config), and an approval is made on that
// user's behalf, so graphcd's RBAC and the project's approval policy judge
// the person, not the bot. docs/chatops.md is the manual.
package chatops

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultListen is where the bot serves its slash commands and /healthz.
const DefaultListen = ":8090"

// shutdownTimeout bounds how long a stopping bot waits for commands in
// flight; each is answered within commandTimeout anyway.
const shutdownTimeout = 5 * time.Second

// Options are the bot's settings as given: flag values and file names,
// before anything is read or checked. Load turns them into a Config.
type Options struct {
	// Server is graphcd's base URL, such as https://graphcd.example.com.
	Server string
	// ServerCAFile is a PEM file of graphcd's certificate or its CA, when
	// the system's roots do not verify it.
	ServerCAFile string
	// TokenFile holds the bot's bearer token.
	TokenFile string
	// WebhookURL is the chat's incoming webhook. It is a secret.
	WebhookURL string
	// SigningSecretFile holds Slack's signing secret.
	SigningSecretFile string
	// Listen is the address of the slash commands and /healthz.
	Listen string
	// ConfigFile is the identity file mapping chat users to graphcd users
	// and groups; empty maps no one.
	ConfigFile string
}

// Config is what the bot runs with.
type Config struct {
	// Server is graphcd's base URL, without a trailing slash.
	Server *url.URL
	// Token is the bot's bearer token.
	Token string
	// WebhookURL is the chat's incoming webhook. It is a secret: it is
	// never logged.
	WebhookURL string
	// Listen is the address of the slash commands and /healthz.
	Listen string
	// ServerCA (PEM) verifies graphcd's certificate instead of the
	// system's roots. Empty means the system's roots.
	ServerCA []byte
	// SigningSecret is Slack's signing secret, which signs every command.
	SigningSecret string
	// Identities maps chat users to graphcd users. Nil maps no one: /sync
	// then acts for anyone who can send the command, and /approve is
	// refused.
	Identities *Identities
}

// Environment variables read when the matching option is empty: the
// names the bot had as an example program, and the secrets themselves
// for those who would rather not use files.
const (
	envToken          = "GRAPHCD_TOKEN" //nolint:gosec // G101: a variable's name, not a credential
	envWebhookURL     = "CHAT_WEBHOOK_URL"
	envSigningSecret  = "SLACK_SIGNING_SECRET"      //nolint:gosec // G101: a variable's name, not a credential
	envSigningSecretF = "SLACK_SIGNING_SECRET_FILE" //nolint:gosec // G101: a variable's name, not a credential
	envListen         = "LISTEN"
)

// Load reads the files o names (readFile) and checks the result. getenv
// supplies the fallbacks of the envToken ... envListen constants. Its
// errors never show a secret.
func Load(o Options, getenv func(string) string, readFile func(string) ([]byte, error)) (Config, error) {
	o.WebhookURL = firstOf(o.WebhookURL, getenv(envWebhookURL))
	o.SigningSecretFile = firstOf(o.SigningSecretFile, getenv(envSigningSecretF))
	o.Listen = firstOf(o.Listen, getenv(envListen), DefaultListen)

	cfg := Config{WebhookURL: o.WebhookURL, Listen: o.Listen}
	u, err := url.Parse(strings.TrimSuffix(o.Server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Config{}, errors.New("the server (--server) must be an http or https URL")
	}
	cfg.Server = u
	if o.ServerCAFile != "" {
		if cfg.ServerCA, err = readFile(o.ServerCAFile); err != nil {
			return Config{}, fmt.Errorf("server CA: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(cfg.ServerCA) {
			return Config{}, fmt.Errorf("server CA: %s holds no PEM certificate", o.ServerCAFile)
		}
	}
	if cfg.Token, err = secret(readFile, o.TokenFile, getenv(envToken)); err != nil {
		return Config{}, fmt.Errorf("token: %w", err)
	}
	if cfg.Token == "" {
		return Config{}, errors.New("no token: set --token-file or " + envToken)
	}
	if cfg.SigningSecret, err = secret(readFile, o.SigningSecretFile, getenv(envSigningSecret)); err != nil {
		return Config{}, fmt.Errorf("signing secret: %w", err)
	}
	if cfg.SigningSecret == "" {
		return Config{}, errors.New("no signing secret: set --signing-secret-file or " + envSigningSecret)
	}
	if w, err := url.Parse(cfg.WebhookURL); err != nil || (w.Scheme != "http" && w.Scheme != "https") || w.Host == "" {
		// The URL is a secret: do not echo it.
		return Config{}, errors.New("the webhook URL (--webhook-url) must be an http or https URL")
	}
	if o.ConfigFile != "" {
		raw, err := readFile(o.ConfigFile)
		if err != nil {
			return Config{}, fmt.Errorf("identity file: %w", err)
		}
		if cfg.Identities, err = ParseIdentities(raw); err != nil {
			return Config{}, fmt.Errorf("identity file %s: %w", o.ConfigFile, err)
		}
	}
	return cfg, nil
}

// firstOf returns the first of vs that is not empty.
func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// secret reads a secret from file, or takes value when file is empty.
func secret(readFile func(string) ([]byte, error), file, value string) (string, error) {
	if file == "" {
		return strings.TrimSpace(value), nil
	}
	b, err := readFile(file)
	if err != nil {
		return "", err // names the file, never its content
	}
	return strings.TrimSpace(string(b)), nil
}

// Run serves the slash commands and /healthz and relays application
// events until ctx ends, then lets the commands in flight finish.
func Run(ctx context.Context, cfg Config, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := newBot(cfg, log)
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           b.routes(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		b.watchEvents(ctx)
		b.following.Wait()
	}()
	log.Info("chatops bot started", "listen", lis.Addr().String(), "server", cfg.Server.String(),
		"mapped-users", cfg.Identities.Len())

	select {
	case <-ctx.Done():
	case err = <-served:
	}
	log.Info("chatops bot stopping")
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer stop()
	_ = srv.Shutdown(shutdown)
	cancel()
	<-watched
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
