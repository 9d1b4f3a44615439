package project

import (
	"errors"
	"strings"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestServiceAccountFor(t *testing.T) {
	const inCluster = "https://kubernetes.default.svc"
	type dsa = v1alpha1.ApplicationDestinationServiceAccount
	// The example of Argo CD's documentation, catch-all last.
	argoExample := []dsa{
		{Server: inCluster, Namespace: "guestbook", DefaultServiceAccount: "guestbook-deployer"},
		{Server: inCluster, Namespace: "guestbook-dev", DefaultServiceAccount: "guestbook-dev-deployer"},
		{Server: inCluster, Namespace: "*", DefaultServiceAccount: "default"},
	}
	tests := []struct {
		name                        string
		accounts                    []dsa
		server, namespace, appNamed string
		want                        string // user name, or "!" + the refusal
	}{
		{"exact entry", argoExample, inCluster, "guestbook", "graphcd", "system:serviceaccount:guestbook:guestbook-deployer"},
		{"second entry", argoExample, inCluster, "guestbook-dev", "graphcd", "system:serviceaccount:guestbook-dev:guestbook-dev-deployer"},
		{"catch-all in the destination namespace", argoExample, inCluster, "shop", "graphcd", "system:serviceaccount:shop:default"},
		{"other cluster matches nothing", argoExample, "https://prod.example.com", "guestbook", "graphcd",
			"!no matching service account found for destination server https://prod.example.com and namespace guestbook"},
		{"no entries", nil, inCluster, "shop", "graphcd", "!no matching service account found for destination server https://kubernetes.default.svc and namespace shop"},
		{"no destination namespace names the app's namespace", nil, inCluster, "", "apps", "!~and namespace apps"},
		{"first match wins", []dsa{
			{Server: "*", Namespace: "team-*", DefaultServiceAccount: "team-deployer"},
			{Server: inCluster, Namespace: "team-a", DefaultServiceAccount: "a-deployer"},
		}, inCluster, "team-a", "graphcd", "system:serviceaccount:team-a:team-deployer"},
		{"namespace:name keeps its namespace", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "tenants:deployer"}},
			inCluster, "shop", "graphcd", "system:serviceaccount:tenants:deployer"},
		{"server glob", []dsa{{Server: "https://*.example.com", Namespace: "*", DefaultServiceAccount: "d"}},
			"https://prod.example.com", "x", "graphcd", "system:serviceaccount:x:d"},
		{"server glob class", []dsa{{Server: "https://prod-[0-9].example.com", Namespace: "*", DefaultServiceAccount: "d"}},
			"https://prod-x.example.com", "x", "graphcd", "!~no matching service account"},
		{"cluster-scoped app, star namespace: the app's namespace", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "d"}},
			inCluster, "", "apps", "system:serviceaccount:apps:d"},
		{"empty namespace pattern matches only no namespace", []dsa{{Server: "*", DefaultServiceAccount: "d"}},
			inCluster, "shop", "apps", "!~no matching service account"},
		{"empty namespace pattern, no namespace", []dsa{{Server: "*", DefaultServiceAccount: "d"}},
			inCluster, "", "apps", "system:serviceaccount:apps:d"},
		{"alternatives", []dsa{{Server: "*", Namespace: "{dev,stage}", DefaultServiceAccount: "d"}},
			inCluster, "stage", "apps", "system:serviceaccount:stage:d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompile(t, v1alpha1.AppProjectSpec{DestinationServiceAccounts: tc.accounts})
			if got := r.HasServiceAccounts(); got != (len(tc.accounts) > 0) {
				t.Errorf("HasServiceAccounts = %v", got)
			}
			sa, err := r.ServiceAccountFor(tc.server, tc.namespace, tc.appNamed)
			if refusal, ok := strings.CutPrefix(tc.want, "!"); ok {
				checkDecision(t, err, refusal)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if got := sa.UserName(); got != tc.want {
				t.Errorf("user %q, want %q", got, tc.want)
			}
		})
	}
}

func TestServiceAccountsValidate(t *testing.T) {
	type dsa = v1alpha1.ApplicationDestinationServiceAccount
	tests := []struct {
		name     string
		accounts []dsa
		want     string // a problem the error must contain; "" for valid
	}{
		{"valid", []dsa{{Server: "*", Namespace: "team-*", DefaultServiceAccount: "deployer"}, {Server: "*", Namespace: "*", DefaultServiceAccount: "ops:deployer"}}, ""},
		{"account required", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: " "}},
			"spec.destinationServiceAccounts[0].defaultServiceAccount: a service account is required"},
		{"glob in the account", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "deploy-*"}},
			`spec.destinationServiceAccounts[0].defaultServiceAccount: "deploy-*": a service account may not contain any of`},
		{"slash in the account", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "ns/sa"}}, "may not contain any of"},
		{"header injection", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "sa\r\nX-Evil: 1"}}, "not a valid"},
		{"two colons", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "a:b:c"}}, "not a valid service account name"},
		{"empty namespace part", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: ":sa"}}, "the namespace before ':' is not a valid namespace name"},
		{"empty name part", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "ns:"}}, "not a valid service account name"},
		{"upper case", []dsa{{Server: "*", Namespace: "*", DefaultServiceAccount: "Deployer"}}, "not a valid service account name"},
		{"negated namespace", []dsa{{Server: "*", Namespace: "!*", DefaultServiceAccount: "d"}},
			"spec.destinationServiceAccounts[0].namespace: \"!*\": '!' is not supported here"},
		{"negated server", []dsa{{Server: "!https://x", Namespace: "*", DefaultServiceAccount: "d"}}, "spec.destinationServiceAccounts[0].server"},
		{"bad server glob", []dsa{{Server: "https://{a", Namespace: "*", DefaultServiceAccount: "d"}},
			"spec.destinationServiceAccounts[0].server: pattern \"https://{a\": unterminated alternatives"},
		{"duplicate", []dsa{{Server: "*", Namespace: "a", DefaultServiceAccount: "d"}, {Server: "*", Namespace: "a", DefaultServiceAccount: "e"}},
			"spec.destinationServiceAccounts[1]: server '*' and namespace 'a' are already given by spec.destinationServiceAccounts[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(&v1alpha1.AppProjectSpec{DestinationServiceAccounts: tc.accounts})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var inv *InvalidError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an *InvalidError containing %q", err, tc.want)
			}
			// A project that cannot be enforced permits nothing.
			if _, err := Compile(newProject(v1alpha1.AppProjectSpec{DestinationServiceAccounts: tc.accounts})); err == nil {
				t.Errorf("Compile accepted the project")
			}
		})
	}
}
