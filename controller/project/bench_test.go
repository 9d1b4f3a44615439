package project

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// Run with: go test -run '^$' -bench . -benchmem -count 5 ./controller/project/

// benchSpec is a project of the size teams write: a dozen repository
// patterns with a negation, a dozen destinations with deny entries, kind
// lists, and five sync windows in two time zones.
func benchSpec() v1alpha1.AppProjectSpec {
	return v1alpha1.AppProjectSpec{
		SourceRepos: []string{
			"!https://github.com/example/legacy-*",
			"https://github.com/example/platform.git",
			"https://github.com/example/shop-*",
			"https://github.com/example/team-a/**",
			"git@github.com:example/infra-*",
			"https://gitlab.example.com/{ops,sre}/*",
			"https://charts.example.com",
			"oci://registry.example.com/charts/*",
			"https://github.com/example/app-[0-9][0-9]",
			"https://github.com/example/docs",
			"https://github.com/example/tools-?",
			"https://github.com/example/web",
		},
		Destinations: []v1alpha1.ApplicationDestination{
			{Server: "*", Namespace: "!kube-*"},
			{Server: "!https://legacy-*", Namespace: "*"},
			{Server: "https://kubernetes.default.svc", Namespace: "team-a-*"},
			{Server: "https://prod-eu.example.com:6443", Namespace: "shop"},
			{Server: "https://prod-us.example.com:6443", Namespace: "shop"},
			{Name: "staging-*", Namespace: "team-a-*"},
			{Name: "dev", Namespace: "*"},
			{Server: "https://edge-[0-9].example.com", Namespace: "edge"},
			{Server: "https://kubernetes.default.svc", Namespace: "monitoring"},
			{Server: "https://kubernetes.default.svc", Namespace: "ingress"},
			{Server: "https://kubernetes.default.svc", Namespace: "shop"},
			{Name: "in-cluster", Namespace: "shop"},
		},
		ClusterResourceWhitelist:   []metav1.GroupKind{{Group: "", Kind: "Namespace"}, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole*"}},
		NamespaceResourceBlacklist: []metav1.GroupKind{{Group: "", Kind: "ResourceQuota"}, {Group: "", Kind: "LimitRange"}},
		SyncWindows: []v1alpha1.SyncWindow{
			{Kind: "allow", Schedule: "0 8 * * 1-5", Duration: "10h", Applications: []string{"*"}, TimeZone: "Europe/Berlin"},
			{Kind: "deny", Schedule: "0 0 24 12 *", Duration: "48h", Applications: []string{"*"}, Description: "holidays"},
			{Kind: "deny", Schedule: "30 2 * * *", Duration: "30m", Clusters: []string{"prod-*", "https://prod-*"}, TimeZone: "America/New_York"},
			{Kind: "allow", Schedule: "0 22 * * 6", Duration: "4h", Namespaces: []string{"shop"}, ManualSync: true},
			{Kind: "deny", Schedule: "*/30 * * * *", Duration: "5m", Applications: []string{"batch-*"}, Namespaces: []string{"jobs"}, UseAndOperator: true},
		},
	}
}

func BenchmarkSourceAllowed(b *testing.B) {
	r := mustCompile(b, benchSpec())
	for _, c := range []struct{ name, url string }{
		{"allowed-prefix", "https://github.com/example/team-a/sub/service.git"},
		{"allowed-last", "https://github.com/example/web.git"},
		{"denied-negation", "https://github.com/example/legacy-billing"},
		{"denied-unlisted", "https://github.com/other/repo.git"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = r.SourceAllowed(c.url)
			}
		})
	}
}

func BenchmarkDestinationAllowed(b *testing.B) {
	r := mustCompile(b, benchSpec())
	for _, c := range []struct{ name, server, cluster, namespace string }{
		{"allowed", "https://kubernetes.default.svc", "in-cluster", "shop"},
		{"denied-negation", "https://kubernetes.default.svc", "in-cluster", "kube-system"},
		{"denied-unlisted", "https://prod-eu.example.com:6443", "prod-eu", "billing"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = r.DestinationAllowed(c.server, c.cluster, c.namespace)
			}
		})
	}
}

func BenchmarkSyncAllowed(b *testing.B) {
	r := mustCompile(b, benchSpec())
	target := WindowTarget{AppName: "shop-web", AppNamespace: "graphcd", Server: "https://prod-eu.example.com:6443", ClusterName: "prod-eu", Namespace: "shop"}
	for _, c := range []struct{ name, at string }{
		{"open", "2026-01-06T10:00:00Z"},    // Tuesday: the allow window is open
		{"blocked", "2026-01-06T07:35:00Z"}, // the New York deny window is open
	} {
		at := mustTime(b, c.at)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = r.SyncAllowed(target, at, false)
			}
		})
	}
}

// BenchmarkCompile is the cost of compiling benchSpec once, paid on every
// call of the package-level functions and once per generation by Cache.
func BenchmarkCompile(b *testing.B) {
	p := newProject(benchSpec())
	for b.Loop() {
		if _, err := Compile(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCacheRules(b *testing.B) {
	p := newProject(benchSpec())
	p.UID, p.Generation = "uid", 1
	var c Cache
	for b.Loop() {
		if _, err := c.Rules(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGlobGeneral measures the automaton on a pattern no fast path
// takes.
func BenchmarkGlobGeneral(b *testing.B) {
	g, err := compileGlob("https://{github,gitlab}.com/*/team-?-[a-z]*/**.git", '/')
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = g.match("https://gitlab.com/example/team-a-shop/services/web.git")
	}
}
