package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Session is a graphcd session: its bearer token and when it expires.
type Session struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// maxAuthBody bounds the answers of the login endpoints.
const maxAuthBody = 64 << 10

// Login logs in with a local account's password (POST /auth/login).
func (c *Client) Login(ctx context.Context, username, password string) (Session, error) {
	return c.postSession(ctx, "/auth/login", map[string]string{"username": username, "password": password})
}

// Exchange trades an ID token of the server's SSO (the embedded Dex or
// its OIDC provider) for a session (POST /auth/exchange).
func (c *Client) Exchange(ctx context.Context, idToken string) (Session, error) {
	return c.postSession(ctx, "/auth/exchange", map[string]string{"idToken": idToken})
}

// Logout revokes c's session (POST /auth/logout).
func (c *Client) Logout(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Server+"/auth/logout", nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("log out: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		return authError("log out", resp)
	}
	return nil
}

func (c *Client) postSession(ctx context.Context, path string, body any) (Session, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return Session{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Server+path, bytes.NewReader(raw))
	if err != nil {
		return Session{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	// No bearer token: a login starts a session, it does not use one.
	resp, err := c.anonymous().Do(req)
	if err != nil {
		return Session{}, fmt.Errorf("log in: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return Session{}, authError("log in", resp)
	}
	var s Session
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAuthBody)).Decode(&s); err != nil || s.Token == "" {
		return Session{}, errors.New("log in: the server's answer has no token")
	}
	return s, nil
}

// authError describes a refusal of a login endpoint by its {"error": ...}
// message, which never holds credentials.
func authError(what string, resp *http.Response) error {
	var e struct {
		Error string `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxAuthBody))
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s (HTTP %d)", what, e.Error, resp.StatusCode)
	}
	return fmt.Errorf("%s: HTTP %d", what, resp.StatusCode)
}
