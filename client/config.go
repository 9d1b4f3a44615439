package client

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"sigs.k8s.io/yaml"
)

// Config is the CLI's configuration file: the servers it logged in to
// (contexts) and which one commands talk to. It holds session tokens, so
// it is written with mode 0600 in a directory of mode 0700.
//
//	current-context: graphcd.example.com
//	contexts:
//	- name: graphcd.example.com
//	  server: https://graphcd.example.com
//	  user: admin
//	  token: eyJ...
//	  expiresAt: "2026-12-01T10:00:00Z"
type Config struct {
	CurrentContext string    `json:"current-context,omitempty"`
	Contexts       []Context `json:"contexts,omitempty"`
}

// Context is one server and the session the CLI holds with it.
type Context struct {
	Name      string     `json:"name"`
	Server    string     `json:"server"`
	User      string     `json:"user,omitempty"`
	Token     string     `json:"token,omitempty"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Insecure skips the verification of the server's certificate, as
	// graphcd login --insecure asked.
	Insecure bool `json:"insecure,omitempty"`
	// ServerCrt is the PEM file (an absolute path) of the server's
	// certificate or CA to verify it with, as graphcd login --server-crt
	// gave.
	ServerCrt string `json:"server-crt,omitempty"`
}

// ConfigPath is where the configuration lives:
// $XDG_CONFIG_HOME/graphcd/config, else ~/.config/graphcd/config.
func ConfigPath() (string, error) {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "graphcd", "config"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the configuration: %w", err)
	}
	return filepath.Join(home, ".config", "graphcd", "config"), nil
}

// LoadConfig reads the configuration at path; a missing file is an empty
// configuration.
func LoadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the configuration: %w", err)
	}
	var c Config
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, fmt.Errorf("read the configuration %s: %w", path, err)
	}
	return &c, nil
}

// Save writes the configuration to path atomically, mode 0600.
func (c *Config) Save(path string) error {
	raw, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	f, err := os.CreateTemp(dir, ".config-*") // mode 0600
	if err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.Write(raw); err != nil {
		_ = f.Close()
		return fmt.Errorf("write the configuration: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write the configuration: %w", err)
	}
	return nil
}

// Context returns the context called name, or nil.
func (c *Config) Context(name string) *Context {
	i := slices.IndexFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if i < 0 {
		return nil
	}
	return &c.Contexts[i]
}

// Current returns the current context, or nil when there is none.
func (c *Config) Current() *Context {
	if c.CurrentContext == "" {
		return nil
	}
	return c.Context(c.CurrentContext)
}

// Put adds ctx, or replaces the context of the same name, and makes it
// current.
func (c *Config) Put(ctx Context) {
	if old := c.Context(ctx.Name); old != nil {
		*old = ctx
	} else {
		c.Contexts = append(c.Contexts, ctx)
	}
	c.CurrentContext = ctx.Name
}

// Remove drops the context called name; the current context is unset
// when it was that one.
func (c *Config) Remove(name string) {
	c.Contexts = slices.DeleteFunc(c.Contexts, func(x Context) bool { return x.Name == name })
	if c.CurrentContext == name {
		c.CurrentContext = ""
	}
}
