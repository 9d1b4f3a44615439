//go:build integration

package resolvers_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMeAndSettings reads the caller (anonymous until Auth) and the public
// settings from graphcd-cm, whose secrets never come out.
func TestMeAndSettings(t *testing.T) {
	t.Parallel()
	const secret = "dex-client-secret-value"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: secretsNS, Name: "graphcd-cm"}, Data: map[string]string{
		"url": "https://cd.example.com", "ui.bannercontent": "Freeze until Monday",
		"dex.config": "connectors:\n- type: github\n  name: GitHub\n  config: {clientSecret: " + secret + "}\n",
	}}
	if _, err := cluster.Client.CoreV1().ConfigMaps(secretsNS).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const q = `{ me { loggedIn username groups } settings { url uiBannerContent uiBannerPermanent ssoProviders } }`
	var got struct {
		Me struct {
			LoggedIn bool
			Username string
			Groups   []string
		}
		Settings struct {
			URL, UIBannerContent string
			UIBannerPermanent    bool
			SSOProviders         []string
		}
	}
	eventually(t, "settings read", func() error {
		_, resp := query(t, q, nil)
		if strings.Contains(string(resp.Data), secret) {
			t.Fatalf("a secret reached the response: %s", resp.Data)
		}
		data(t, q, nil, &got)
		if got.Settings.URL != "https://cd.example.com" {
			return errNotYet // the reader reuses an older read for a few seconds
		}
		return nil
	})
	if got.Me.LoggedIn || got.Me.Username != "anonymous" || len(got.Me.Groups) != 0 {
		t.Errorf("me = %+v", got.Me)
	}
	s := got.Settings
	if s.UIBannerContent != "Freeze until Monday" || s.UIBannerPermanent || len(s.SSOProviders) != 1 || s.SSOProviders[0] != "GitHub" {
		t.Errorf("settings = %+v", s)
	}
}
