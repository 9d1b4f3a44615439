package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/graphcd/graphcd/auth/oidc"
	"github.com/graphcd/graphcd/internal/wellknown"
)

// LoginSSO logs in through the server's single sign-on (its embedded Dex)
// in a browser: it runs the OIDC code flow of the CLI's public client with
// a redirect to a loopback port of this machine, calls browse with the URL
// the user must open, and trades the ID token for a session.
func (c *Client) LoginSSO(ctx context.Context, browse func(loginURL string) error) (Session, error) {
	p, err := oidc.NewProvider(ctx, oidc.Options{
		Issuer: c.Server + "/api/dex", ClientID: wellknown.DexCLIClientID, BaseURL: c.Server, HTTPClient: c.HTTP,
		Scopes: slices.Concat(oidc.DefaultScopes, []string{"audience:server:client_id:" + wellknown.DexClientID}),
	})
	if err != nil {
		return Session{}, fmt.Errorf("single sign-on at %s: %w", c.Server, err)
	}
	_, tok, err := p.LoopbackLogin(ctx, browse)
	if err != nil {
		return Session{}, err
	}
	idToken, _ := tok.Extra("id_token").(string)
	if idToken == "" {
		return Session{}, errors.New("single sign-on: the provider sent no ID token")
	}
	return c.Exchange(ctx, idToken)
}
