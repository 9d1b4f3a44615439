// Command chatops-bot is an example graphcd client for a chat room: it
// posts failed syncs and degraded applications to a Slack-compatible
// incoming webhook, and answers a "/sync APP [namespace]" slash command by
// asking graphcd to sync APP with a project role's token.
//
// It uses only the standard library and gorilla/websocket, so it can be
// copied out of this repository. See README.md for the setup.
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// config is what the bot needs, from flags or the environment.
type config struct {
	// server is graphcd's base URL, such as https://graphcd.example.com.
	server *url.URL
	// token is the project role's bearer token.
	token string
	// webhookURL is the chat's incoming webhook. It is a secret: it is
	// never logged.
	webhookURL string
	// listen is the address of the slash-command endpoint.
	listen string
	// serverCA (PEM) verifies graphcd's certificate instead of the
	// system's roots: its self-signed certificate, or the CA that signed
	// it. Empty means the system's roots.
	serverCA []byte
	// signingSecret is Slack's signing secret, which signs every command.
	signingSecret string
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	cfg, err := loadConfig(os.Args[1:], os.Getenv, os.ReadFile)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatops-bot:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("chatops-bot stopped", "err", err)
		os.Exit(1)
	}
}

// loadConfig reads the flags in args; each defaults to an environment
// variable read with getenv. Secrets may come from files (readFile), so
// that they need not sit in the environment.
func loadConfig(args []string, getenv func(string) string, readFile func(string) ([]byte, error)) (config, error) {
	fs := flag.NewFlagSet("chatops-bot", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", getenv("GRAPHCD_SERVER"), "graphcd's base URL (env GRAPHCD_SERVER)")
	caFile := fs.String("server-ca-file", getenv("GRAPHCD_SERVER_CA_FILE"), "PEM file of graphcd's certificate or its CA, when the system does not trust it (env GRAPHCD_SERVER_CA_FILE)")
	tokenFile := fs.String("token-file", getenv("GRAPHCD_TOKEN_FILE"), "file holding the project role token (env GRAPHCD_TOKEN_FILE; or the token itself in GRAPHCD_TOKEN)")
	webhook := fs.String("webhook-url", getenv("CHAT_WEBHOOK_URL"), "Slack-compatible incoming webhook URL (env CHAT_WEBHOOK_URL)")
	listen := fs.String("listen", envOr(getenv, "LISTEN", ":8090"), "address of the slash-command endpoint (env LISTEN)")
	secretFile := fs.String("signing-secret-file", getenv("SLACK_SIGNING_SECRET_FILE"), "file holding Slack's signing secret (env SLACK_SIGNING_SECRET_FILE; or the secret itself in SLACK_SIGNING_SECRET)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
		}
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	cfg := config{webhookURL: *webhook, listen: *listen}
	u, err := url.Parse(strings.TrimSuffix(*server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return config{}, errors.New("the server (-server or GRAPHCD_SERVER) must be an http or https URL")
	}
	cfg.server = u
	if *caFile != "" {
		if cfg.serverCA, err = readFile(*caFile); err != nil {
			return config{}, fmt.Errorf("server CA: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(cfg.serverCA) {
			return config{}, fmt.Errorf("server CA: %s holds no PEM certificate", *caFile)
		}
	}
	if cfg.token, err = secret(readFile, *tokenFile, getenv("GRAPHCD_TOKEN")); err != nil {
		return config{}, fmt.Errorf("token: %w", err)
	}
	if cfg.token == "" {
		return config{}, errors.New("no token: set GRAPHCD_TOKEN_FILE (-token-file) or GRAPHCD_TOKEN")
	}
	if cfg.signingSecret, err = secret(readFile, *secretFile, getenv("SLACK_SIGNING_SECRET")); err != nil {
		return config{}, fmt.Errorf("signing secret: %w", err)
	}
	if cfg.signingSecret == "" {
		return config{}, errors.New("no signing secret: set SLACK_SIGNING_SECRET_FILE (-signing-secret-file) or SLACK_SIGNING_SECRET")
	}
	if w, err := url.Parse(cfg.webhookURL); err != nil || (w.Scheme != "http" && w.Scheme != "https") || w.Host == "" {
		// The URL is a secret: do not echo it.
		return config{}, errors.New("the webhook URL (-webhook-url or CHAT_WEBHOOK_URL) must be an http or https URL")
	}
	return cfg, nil
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
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

// run serves the slash-command endpoint and relays application events
// until ctx ends.
func run(ctx context.Context, cfg config, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := newBot(cfg, log)
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.listen)
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
	}()
	log.Info("chatops-bot started", "listen", lis.Addr().String(), "server", cfg.server.String())

	select {
	case <-ctx.Done():
	case err = <-served:
	}
	shutdown, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	_ = srv.Shutdown(shutdown)
	cancel()
	<-watched
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
