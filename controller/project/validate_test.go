package project

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func validWindow() v1alpha1.SyncWindow {
	return v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 22 * * *", Duration: "1h", Applications: []string{"*"}}
}

func TestValidate(t *testing.T) {
	window := func(edit func(*v1alpha1.SyncWindow)) v1alpha1.AppProjectSpec {
		w := validWindow()
		edit(&w)
		return v1alpha1.AppProjectSpec{SyncWindows: []v1alpha1.SyncWindow{w}}
	}
	tests := []struct {
		name string
		spec v1alpha1.AppProjectSpec
		want string // a problem the error must contain; "" for valid
	}{
		{"empty spec", v1alpha1.AppProjectSpec{}, ""},
		{"full valid spec", v1alpha1.AppProjectSpec{
			SourceRepos:                []string{"*", "!https://gitlab.com/x/**", "git@github.com:org/*"},
			Destinations:               []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "!kube-system"}, {Name: "prod-*", Namespace: "team-{a,b}"}},
			ClusterResourceWhitelist:   []metav1.GroupKind{gk("*", "*")},
			NamespaceResourceBlacklist: []metav1.GroupKind{gk("", "ResourceQuota")},
			SourceNamespaces:           []string{"team-*", "/^ci-[0-9]+$/"},
			SyncWindows: []v1alpha1.SyncWindow{
				validWindow(),
				{Kind: "allow", Schedule: "@daily", Duration: "30m", Clusters: []string{"in-cluster"}, TimeZone: "America/New_York", UseAndOperator: true, Namespaces: []string{"*"}},
			},
			OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{Ignore: []v1alpha1.OrphanedResourceKey{{Kind: "ConfigMap"}}},
			SignatureKeys:     []v1alpha1.SignatureKey{{KeyID: "4AEE18F83AFDEB23"}},
		}, ""},
		{"bad repo glob", v1alpha1.AppProjectSpec{SourceRepos: []string{"https://github.com/[org"}},
			`spec.sourceRepos[0]: pattern "https://github.com/[org": unterminated character class`},
		{"repo deny all", v1alpha1.AppProjectSpec{SourceRepos: []string{"!*"}}, "spec.sourceRepos[0]: '!*' denies every repository"},
		{"empty repo", v1alpha1.AppProjectSpec{SourceRepos: []string{" "}}, "spec.sourceRepos[0]: empty repository pattern"},
		{"repo pattern credentials are not shown", v1alpha1.AppProjectSpec{SourceRepos: []string{"https://u:s3cret@h/[x"}}, `"https://u:***@h/[x"`},
		{"bad destination server", v1alpha1.AppProjectSpec{Destinations: []v1alpha1.ApplicationDestination{{Server: "https://{a", Namespace: "*"}}},
			"spec.destinations[0].server: pattern \"https://{a\": unterminated alternatives"},
		{"destination deny all", v1alpha1.AppProjectSpec{Destinations: []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "!*"}}},
			"spec.destinations[0].namespace: '!*' denies everything"},
		{"destination bare bang", v1alpha1.AppProjectSpec{Destinations: []v1alpha1.ApplicationDestination{{Server: "!", Namespace: "*"}}},
			"spec.destinations[0].server: '!' needs a pattern"},
		{"kind required", v1alpha1.AppProjectSpec{ClusterResourceWhitelist: []metav1.GroupKind{gk("apps", "")}},
			"spec.clusterResourceWhitelist[0].kind: kind is required"},
		{"bad kind glob", v1alpha1.AppProjectSpec{NamespaceResourceBlacklist: []metav1.GroupKind{gk("", "[z-a]")}},
			"spec.namespaceResourceBlacklist[0].kind: pattern \"[z-a]\": character range z-a is reversed"},
		{"bad group glob", v1alpha1.AppProjectSpec{NamespaceResourceWhitelist: []metav1.GroupKind{gk("a\\", "*")}},
			"spec.namespaceResourceWhitelist[0].group"},
		{"bad source namespace regexp", v1alpha1.AppProjectSpec{SourceNamespaces: []string{"/team-(/"}},
			`spec.sourceNamespaces[0]: regular expression "/team-(/"`},
		{"bad orphan glob", v1alpha1.AppProjectSpec{OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{
			Ignore: []v1alpha1.OrphanedResourceKey{{Name: "[x"}}}}, "spec.orphanedResources.ignore[0].name"},
		{"bad key", v1alpha1.AppProjectSpec{SignatureKeys: []v1alpha1.SignatureKey{{KeyID: "not-hex"}}},
			`spec.signatureKeys[0].keyID: "not-hex" is not a GnuPG key ID`},
		{"window kind", window(func(w *v1alpha1.SyncWindow) { w.Kind = "block" }),
			`spec.syncWindows[0].kind: "block" is not a window kind; use "allow" or "deny"`},
		{"window kind is case-sensitive", window(func(w *v1alpha1.SyncWindow) { w.Kind = "Deny" }), "spec.syncWindows[0].kind"},
		{"window schedule missing", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "" }), "spec.syncWindows[0].schedule: schedule is required"},
		{"window schedule out of range", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "61 * * * *" }),
			`spec.syncWindows[0].schedule: "61 * * * *" is not a cron schedule`},
		{"window schedule with seconds", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "0 0 22 * * *" }), "is not a cron schedule"},
		{"window schedule garbage", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "every night" }), "is not a cron schedule"},
		{"window step zero", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "*/0 * * * *" }), "is not a cron schedule"},
		{"window @every", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "@every 1h" }), "@every has no fixed start time"},
		{"window TZ prefix", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "CRON_TZ=Europe/Berlin 0 22 * * *" }), "set the time zone in the window's timeZone field"},
		{"window never fires", window(func(w *v1alpha1.SyncWindow) { w.Schedule = "0 0 30 2 *" }), `"0 0 30 2 *" never fires`},
		{"window duration missing", window(func(w *v1alpha1.SyncWindow) { w.Duration = "" }), "spec.syncWindows[0].duration: duration is required"},
		{"window duration unit", window(func(w *v1alpha1.SyncWindow) { w.Duration = "1d" }), `spec.syncWindows[0].duration: "1d" is not a duration`},
		{"window duration negative", window(func(w *v1alpha1.SyncWindow) { w.Duration = "-1h" }), "duration must be positive"},
		{"window duration zero", window(func(w *v1alpha1.SyncWindow) { w.Duration = "0s" }), "duration must be positive"},
		{"window time zone", window(func(w *v1alpha1.SyncWindow) { w.TimeZone = "Mars/Olympus_Mons" }),
			`spec.syncWindows[0].timeZone: "Mars/Olympus_Mons" is not an IANA time zone`},
		{"window without selectors", window(func(w *v1alpha1.SyncWindow) { w.Applications = nil }),
			"spec.syncWindows[0]: a window needs at least one of applications, namespaces or clusters"},
		{"window bad selector glob", window(func(w *v1alpha1.SyncWindow) { w.Namespaces = []string{"[abc"} }),
			"spec.syncWindows[0].namespaces[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(&tt.spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("Validate = %v, want *InvalidError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("Validate leaks a credential: %q", err)
			}
		})
	}
}

func TestValidateListsEveryProblem(t *testing.T) {
	spec := v1alpha1.AppProjectSpec{
		SourceRepos: []string{"[", "!*"},
		SyncWindows: []v1alpha1.SyncWindow{{Kind: "x", Schedule: "y", Duration: "z", TimeZone: "w"}},
	}
	var inv *InvalidError
	if err := Validate(&spec); !errors.As(err, &inv) {
		t.Fatalf("Validate = %v", err)
	}
	if len(inv.Problems) != 7 {
		t.Errorf("got %d problems, want 7 (2 repos, kind, schedule, duration, timeZone, selectors):\n%s", len(inv.Problems), strings.Join(inv.Problems, "\n"))
	}
}

func TestInvalidProjectRefusesEverything(t *testing.T) {
	p := newProject(v1alpha1.AppProjectSpec{
		SourceRepos:              []string{"*"},
		Destinations:             []v1alpha1.ApplicationDestination{{Server: "*", Namespace: "*"}},
		ClusterResourceWhitelist: []metav1.GroupKind{gk("*", "*")},
		SyncWindows:              []v1alpha1.SyncWindow{{Kind: "deny", Schedule: "0 25 * * *", Duration: "1h", Applications: []string{"*"}}},
	})
	if _, err := Compile(p); err == nil || !strings.HasPrefix(err.Error(), "project 'team-a' is invalid: spec.syncWindows[0].schedule") {
		t.Fatalf("Compile = %v", err)
	}
	for name, err := range map[string]error{
		"SourceAllowed":            SourceAllowed(p, "https://x/y"),
		"DestinationAllowed":       DestinationAllowed(p, "https://x", "", "y"),
		"ClusterResourceAllowed":   ClusterResourceAllowed(p, "", "Namespace"),
		"NamespaceResourceAllowed": NamespaceResourceAllowed(p, "", "ConfigMap"),
		"AppNamespaceAllowed":      AppNamespaceAllowed(p, "graphcd", "graphcd"),
	} {
		var inv *InvalidError
		if !errors.As(err, &inv) || inv.Project != "team-a" {
			t.Errorf("%s = %v, want the project's *InvalidError", name, err)
		}
	}
	if _, err := SyncWindows(p, WindowTarget{AppName: "a"}, scheduleCheckFrom); err == nil {
		t.Error("SyncWindows on an invalid project succeeded")
	}
}
