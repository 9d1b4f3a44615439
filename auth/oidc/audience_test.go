package oidc

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/internal/wellknown"
)

// TestVerifyRefusesTokenForAnotherClient gets a genuine ID token from the
// same Dex for another registered client and feeds it to graphcd's
// verifier.
func TestVerifyRefusesTokenForAnotherClient(t *testing.T) {
	g := newGraphcd(t)
	g.embedDex(t, dexConfig(t, `- id: grafana
  name: Grafana
  secret: grafana-secret
  redirectURIs: [`+g.URL+`/grafana/callback]
`), "")
	g.serveLogin(t, Options{Issuer: g.URL + "/api/dex", ClientID: g.dex.Client().ID, ClientSecret: g.dex.Client().Secret})
	grafana, err := NewProvider(t.Context(), Options{
		Issuer: g.URL + "/api/dex", ClientID: "grafana", ClientSecret: "grafana-secret", BaseURL: g.URL,
	})
	if err != nil {
		t.Fatal(err)
	}
	l, err := grafana.StartLogin(t.Context(), g.URL+"/grafana/callback")
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, "/grafana/callback")
	cb := b.signInAtDex(l.URL, userEmail, userPassword)
	id, tok, err := grafana.FinishLogin(t.Context(), l, cb.Query())
	if err != nil {
		t.Fatalf("grafana's own login: %v", err)
	}
	checkIdentity(t, id, g.URL+"/api/dex")
	raw, _ := tok.Extra("id_token").(string)
	if _, err := grafana.Verify(t.Context(), raw); err != nil {
		t.Fatalf("grafana's verifier refuses its own token: %v", err)
	}
	_, err = g.provider.Verify(t.Context(), raw)
	if err == nil || !strings.Contains(err.Error(), "audience") {
		t.Errorf("graphcd's verifier on grafana's token: %v, want an audience error", err)
	}
}

// TestLoopbackLogin logs the CLI in through a loopback redirect with the
// embedded Dex's public client. With the cross-client audience scope the
// token is good for graphcd; without it, graphcd refuses it.
func TestLoopbackLogin(t *testing.T) {
	g := newGraphcd(t)
	g.embedDex(t, dexConfig(t, ""), "")
	g.serveLogin(t, Options{Issuer: g.URL + "/api/dex", ClientID: g.dex.Client().ID, ClientSecret: g.dex.Client().Secret})

	for _, tc := range []struct {
		name       string
		scopes     []string
		forGraphcd bool
	}{
		{"audience graphcd", slices.Concat(DefaultScopes, []string{"audience:server:client_id:" + wellknown.DexClientID}), true},
		{"cli only", DefaultScopes, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli, err := NewProvider(t.Context(), Options{
				Issuer: g.URL + "/api/dex", ClientID: g.dex.CLIClientID(), BaseURL: g.URL, Scopes: tc.scopes,
			})
			if err != nil {
				t.Fatal(err)
			}
			id, tok, err := cli.LoopbackLogin(t.Context(), func(loginURL string) error {
				b := newBrowser(t, "/auth/callback")
				cb := b.signInAtDex(loginURL, userEmail, userPassword)
				if !strings.HasPrefix(cb.String(), "http://127.0.0.1:") {
					t.Errorf("Dex redirected to %s, want the loopback listener", cb)
				}
				// A stray request to the listener does not end the login.
				if pg := b.get(cb.Scheme + "://" + cb.Host + "/auth/callback?state=forged&code=x"); pg.Status != http.StatusBadRequest {
					t.Errorf("forged loopback callback: HTTP %d, want 400", pg.Status)
				}
				if pg := b.get(cb.String()); pg.Status != http.StatusOK {
					t.Errorf("loopback callback: HTTP %d %q", pg.Status, pg.Body)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			checkIdentity(t, id, g.URL+"/api/dex")
			raw, _ := tok.Extra("id_token").(string)
			_, err = g.provider.Verify(t.Context(), raw)
			if tc.forGraphcd && err != nil {
				t.Errorf("graphcd refuses the CLI's token: %v", err)
			}
			if !tc.forGraphcd && err == nil {
				t.Error("graphcd accepts a token minted for the CLI client only")
			}
		})
	}
}
