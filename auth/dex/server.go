package dex

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gosundheit "github.com/AppsFlyer/go-sundheit"
	"github.com/dexidp/dex/server"
	"github.com/dexidp/dex/server/signer"
	"github.com/dexidp/dex/storage"
	"github.com/dexidp/dex/storage/kubernetes"
	"github.com/dexidp/dex/storage/memory"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// Options say how graphcd runs its embedded Dex.
type Options struct {
	// Issuer is the URL Dex is served at, "<graphcd URL>/api/dex". Browsers
	// and the relying party reach Dex through it, and it is the iss claim.
	Issuer string
	// Client is graphcd's own registration.
	Client ClientRegistration
	// CLIClientID is the public client the CLI logs in with through a
	// loopback redirect (http://127.0.0.1:<port>/...). graphcd's client trusts
	// it, so a CLI login that asks for the scope
	// "audience:server:client_id:<Client.ID>" gets an ID token graphcd
	// accepts. Empty means wellknown.DexCLIClientID; "-" registers no CLI client.
	CLIClientID string
	// Storage selects where Dex keeps its state; the zero value is memory.
	Storage Storage
	// Logger receives Dex's logs; nil discards them.
	Logger *slog.Logger
}

// ClientRegistration is graphcd's OAuth2 client in Dex.
type ClientRegistration struct {
	// ID defaults to wellknown.DexClientID.
	ID string
	// Secret defaults to a random value per process. Replicas that share a
	// Dex storage must share it too: set it from graphcd-secret.
	Secret string
	// RedirectURIs are where Dex may send the browser back to, normally
	// "<graphcd URL>/auth/callback". Dex matches them exactly.
	RedirectURIs []string
}

// Storage selects Dex's storage.
type Storage struct {
	// Kubernetes, when set, keeps Dex's state (signing keys, auth requests,
	// codes, refresh tokens) in Dex's CRDs, so that several graphcd replicas
	// can serve one login. Dex creates its CRDs if they are missing.
	Kubernetes *KubernetesStorage
}

// KubernetesStorage locates the cluster that holds Dex's CRDs.
type KubernetesStorage struct {
	// InCluster uses the pod's service account; otherwise KubeconfigFile.
	InCluster      bool
	KubeconfigFile string
}

// Server is graphcd's embedded Dex.
type Server struct {
	dex    *server.Server
	store  storage.Storage
	client ClientRegistration
	cliID  string
	stopGC context.CancelFunc
}

// New starts Dex configured by c. Dex's background work (key rotation,
// garbage collection) runs until ctx is done; Close releases the storage.
func New(ctx context.Context, c *Config, o Options) (*Server, error) {
	if c == nil {
		c = &Config{}
	}
	iss, err := url.Parse(o.Issuer)
	if err != nil || (iss.Scheme != "http" && iss.Scheme != "https") || iss.Host == "" {
		return nil, errors.New("dex: issuer must be an absolute http(s) URL")
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := o.Client
	if client.ID == "" {
		client.ID = wellknown.DexClientID
	}
	if len(client.RedirectURIs) == 0 {
		return nil, errors.New("dex: graphcd's client needs at least one redirect URI")
	}
	if client.Secret == "" {
		if client.Secret, err = randomSecret(); err != nil {
			return nil, err
		}
	}
	cliID := o.CLIClientID
	switch cliID {
	case "":
		cliID = wellknown.DexCLIClientID
	case "-":
		cliID = ""
	}

	clients := []storage.Client{{
		ID:           client.ID,
		Secret:       client.Secret,
		Name:         "graphcd",
		RedirectURIs: slices.Clone(client.RedirectURIs),
	}}
	if cliID != "" {
		clients[0].TrustedPeers = []string{cliID}
		// A public client without redirect URIs may use any loopback one.
		clients = append(clients, storage.Client{ID: cliID, Name: "graphcd CLI", Public: true})
	}
	for _, k := range c.StaticClients {
		if k.ID == client.ID || k.ID == cliID {
			return nil, fmt.Errorf("dex: staticClients: %q is graphcd's own client", k.ID)
		}
		clients = append(clients, storage.Client{
			ID: k.ID, Secret: k.Secret, Name: k.Name, RedirectURIs: k.RedirectURIs,
			TrustedPeers: k.TrustedPeers, Public: k.Public,
		})
	}

	store, err := openStorage(o.Storage, logger)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = store.Close()
		}
	}()
	if o.Storage.Kubernetes != nil {
		if err := waitForStorage(ctx, store); err != nil {
			return nil, err
		}
	}

	connectors := make([]storage.Connector, 0, len(c.Connectors)+1)
	for _, k := range c.Connectors {
		cfg, err := withRedirectURI(k.Config, strings.TrimSuffix(iss.String(), "/")+"/callback")
		if err != nil {
			return nil, fmt.Errorf("dex: connector %s: %w", k.ID, err)
		}
		connectors = append(connectors, storage.Connector{ID: k.ID, Type: k.Type, Name: k.Name, Config: cfg})
	}
	if c.EnablePasswordDB {
		connectors = append(connectors, storage.Connector{ID: server.LocalConnector, Type: server.LocalConnector, Name: "Email"})
	}
	if len(connectors) == 0 {
		return nil, errors.New("dex: dex.config has no connectors and no enablePasswordDB")
	}
	passwords := make([]storage.Password, 0, len(c.StaticPasswords))
	for _, p := range c.StaticPasswords {
		passwords = append(passwords, storage.Password{
			Email: p.Email, Hash: p.Hash, Username: p.Username, UserID: p.UserID, Groups: p.Groups,
		})
	}
	wrapped := storage.WithStaticClients(store, clients)
	wrapped = storage.WithStaticPasswords(wrapped, passwords, logger)
	wrapped = storage.WithStaticConnectors(wrapped, connectors)

	now := func() time.Time { return time.Now().UTC() }
	const idTokensValidFor = 24 * time.Hour
	local := signer.LocalConfig{KeysRotationPeriod: "6h"}
	sign, err := local.Open(ctx, wrapped, idTokensValidFor, now, logger)
	if err != nil {
		return nil, fmt.Errorf("dex: signer: %w", err)
	}
	skipApproval := true
	if c.OAuth2.SkipApprovalScreen != nil {
		skipApproval = *c.OAuth2.SkipApprovalScreen
	}
	dexCtx, cancel := context.WithCancel(ctx)
	srv, err := server.NewServer(dexCtx, server.Config{
		Issuer:                iss.String(),
		Storage:               wrapped,
		SkipApprovalScreen:    skipApproval,
		AlwaysShowLoginScreen: c.OAuth2.AlwaysShowLoginScreen,
		PasswordConnector:     c.OAuth2.PasswordConnector,
		IDTokensValidFor:      idTokensValidFor,
		AuthRequestsValidFor:  10 * time.Minute,
		Now:                   now,
		Web:                   server.WebConfig{Issuer: "graphcd"},
		Logger:                logger,
		Signer:                sign,
		HealthChecker:         gosundheit.New(),
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("dex: %w", err)
	}
	ok = true
	return &Server{dex: srv, store: store, client: client, cliID: cliID, stopGC: cancel}, nil
}

// Handler serves Dex. Mount it at the issuer's path (for example
// mux.Handle("/api/dex/", s.Handler())); it expects full request paths.
func (s *Server) Handler() http.Handler { return s.dex }

// Client is graphcd's registration, with the secret New chose if none was
// given: the relying party authenticates with it.
func (s *Server) Client() ClientRegistration {
	c := s.client
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	return c
}

// CLIClientID is the public client the CLI uses, or "" when there is none.
func (s *Server) CLIClientID() string { return s.cliID }

// Close stops Dex's background work and closes its storage.
func (s *Server) Close() error {
	s.stopGC()
	return s.store.Close()
}

func openStorage(o Storage, logger *slog.Logger) (storage.Storage, error) {
	if o.Kubernetes == nil {
		return memory.New(logger), nil
	}
	k := &kubernetes.Config{InCluster: o.Kubernetes.InCluster, KubeConfigFile: o.Kubernetes.KubeconfigFile}
	s, err := k.Open(logger)
	if err != nil {
		return nil, fmt.Errorf("dex: kubernetes storage: %w", err)
	}
	return s, nil
}

// storageReadyTimeout bounds how long New waits for Dex's CRDs to be
// served after Dex created them.
const storageReadyTimeout = time.Minute

// waitForStorage waits until every kind Dex stores answers: Dex creates
// its CRDs when it opens the Kubernetes storage, and the API server takes
// a moment to serve them; Dex itself would log the failures and retry key
// rotation only 30s later.
func waitForStorage(ctx context.Context, s storage.Storage) error {
	ctx, cancel := context.WithTimeout(ctx, storageReadyTimeout)
	defer cancel()
	const none = "graphcd-readiness-probe"
	probes := []func() error{
		func() error { _, err := s.ListConnectors(ctx); return err },
		func() error { _, err := s.GetClient(ctx, none); return err },
		func() error { _, err := s.ListPasswords(ctx); return err },
		func() error { _, err := s.GetRefresh(ctx, none); return err },
		func() error { _, err := s.GetKeys(ctx); return err },
		func() error { _, err := s.GetAuthRequest(ctx, none); return err },
		func() error { _, err := s.GetAuthCode(ctx, none); return err },
		func() error { _, err := s.GetOfflineSessions(ctx, none, none); return err },
		func() error { _, err := s.GetDeviceRequest(ctx, none); return err },
		func() error { _, err := s.GetDeviceToken(ctx, none); return err },
	}
	for {
		var last error
		for _, probe := range probes {
			if err := probe(); err != nil && !errors.Is(err, storage.ErrNotFound) {
				last = err
				break
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dex: kubernetes storage not ready: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// withRedirectURI sets a connector's redirectURI to Dex's callback when
// dex.config leaves it out, as Argo CD does: the upstream provider sends
// users back to <issuer>/callback. Connectors without the field ignore it.
func withRedirectURI(cfg json.RawMessage, uri string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(cfg, &m); err != nil {
		return nil, errors.New("config is not an object")
	}
	if _, ok := m["redirectURI"]; ok {
		return cfg, nil
	}
	v, err := json.Marshal(uri)
	if err != nil {
		return nil, err
	}
	m["redirectURI"] = v
	return json.Marshal(m)
}

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("dex: client secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
