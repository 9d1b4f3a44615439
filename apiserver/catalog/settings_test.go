package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/graph/model"
)

func TestPublicSettings(t *testing.T) {
	const secret = "dex-client-secret-value"
	data := map[string]string{
		"url":                "https://cd.example.com",
		"ui.bannercontent":   "Maintenance tonight",
		"ui.bannerurl":       "https://status.example.com",
		"ui.bannerpermanent": "true",
		"dex.config": `enablePasswordDB: true
connectors:
- type: github
  id: github
  name: GitHub
  config: {clientID: abc, clientSecret: ` + secret + `}
- type: ldap
  name: Corp LDAP
`,
		"oidc.config":         "name: Okta\nissuer: https://okta.example.com\nclientSecret: " + secret,
		"accounts.alice":      "login",
		"resource.exclusions": "- kinds: [Event]",
		"statusbadge.enabled": " true",
	}
	got := publicSettings(data)
	want := model.Settings{
		URL: "https://cd.example.com", UIBannerContent: "Maintenance tonight", UIBannerURL: "https://status.example.com",
		UIBannerPermanent: true, SSOProviders: []string{"Email", "GitHub", "Corp LDAP", "Okta"}, StatusBadgeEnabled: true,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("settings (-got +want):\n%s", diff)
	}
	if strings.Contains(strings.Join(got.SSOProviders, " ")+got.URL, secret) {
		t.Error("a secret reached the public settings")
	}
	// Malformed SSO configuration hides the providers, nothing else.
	bad := publicSettings(map[string]string{"url": "u", "dex.config": "{{{", "oidc.config": "[1"})
	if bad.URL != "u" || len(bad.SSOProviders) != 0 || bad.StatusBadgeEnabled {
		t.Errorf("with malformed SSO config: %+v", bad)
	}
}

func TestMaxPayloadBytes(t *testing.T) {
	for in, want := range map[string]int64{
		"":        0,
		"50":      50 << 20,
		" 1 ":     1 << 20,
		"0":       0,
		"-5":      0,
		"1.5":     0,
		"10MB":    0,
		"1048577": 0, // over 1 TiB
	} {
		if got := maxPayloadBytes(in); got != want {
			t.Errorf("maxPayloadBytes(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestExecSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		data map[string]string
		want ExecSettings
	}{
		{"unset", nil, ExecSettings{Shells: DefaultExecShells}},
		{"enabled", map[string]string{"exec.enabled": " true\n"}, ExecSettings{Enabled: true, Shells: DefaultExecShells}},
		{"not true", map[string]string{"exec.enabled": "yes"}, ExecSettings{Shells: DefaultExecShells}},
		{"shells", map[string]string{"exec.enabled": "true", "exec.shells": "zsh, ,sh "}, ExecSettings{Enabled: true, Shells: []string{"zsh", "sh"}}},
		{"no shell named", map[string]string{"exec.shells": " , "}, ExecSettings{Shells: DefaultExecShells}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(execSettings(tc.data), tc.want); diff != "" {
				t.Errorf("exec settings (-got +want):\n%s", diff)
			}
		})
	}
}
