package project

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// FuzzValidate feeds arbitrary text into every patterned field of a
// project and into every check: nothing may panic, Validate and Compile
// must agree, and a project that compiles must answer every check.
func FuzzValidate(f *testing.F) {
	f.Add("https://github.com/org/*", "https://github.com/org/repo.git", "*", "in-cluster", "!kube-system", "apps", "Deploy*",
		"team-*", "deny", "0 22 * * *", "1h", "Europe/Berlin", "prod-*", "keep-*", "4AEE18F83AFDEB23", int64(1767650400))
	f.Add("!*", "git@github.com:a/b", "!", "", "", "", "", "/(/", "allow", "@every 1h", "-1h", "Local", "[", "{", "xyz", int64(-1))
	f.Add("{a,b}/**", "", "https://{x", "[!a]", "?", "*", "", "/^a$/", "deny", "*/0 * * * *", "1ns", "", "*", "", "", int64(0))
	f.Add("\\", "\xff", "*", "*", "*", "", "[z-a]", "", "deny", "0 0 30 2 *", "2562047h", "Asia/Kolkata", "a/b", "", "", int64(1<<40))
	f.Fuzz(func(t *testing.T, repo, url, server, name, namespace, group, kind, sourceNS,
		winKind, schedule, duration, tz, selector, orphanName, keyID string, unix int64) {
		spec := v1alpha1.AppProjectSpec{
			SourceRepos:                []string{repo, "!" + repo},
			Destinations:               []v1alpha1.ApplicationDestination{{Server: server, Name: name, Namespace: namespace}},
			ClusterResourceWhitelist:   []metav1.GroupKind{{Group: group, Kind: kind}},
			NamespaceResourceBlacklist: []metav1.GroupKind{{Group: kind, Kind: group}},
			SourceNamespaces:           []string{sourceNS},
			SyncWindows: []v1alpha1.SyncWindow{{
				Kind: winKind, Schedule: schedule, Duration: duration, TimeZone: tz,
				Applications: []string{selector}, Clusters: []string{server}, Namespaces: []string{namespace},
			}},
			OrphanedResources: &v1alpha1.OrphanedResourcesMonitorSettings{Ignore: []v1alpha1.OrphanedResourceKey{{Group: group, Kind: kind, Name: orphanName}}},
			SignatureKeys:     []v1alpha1.SignatureKey{{KeyID: keyID}},
		}
		verr := Validate(&spec)
		r, cerr := Compile(newProject(spec))
		if (verr == nil) != (cerr == nil) {
			t.Fatalf("Validate = %v but Compile = %v", verr, cerr)
		}
		var inv *InvalidError
		if cerr != nil {
			if !errors.As(cerr, &inv) || len(inv.Problems) == 0 {
				t.Fatalf("Compile error %v is not an *InvalidError with problems", cerr)
			}
			if SourceAllowed(newProject(spec), url) == nil {
				t.Fatal("an invalid project allowed a source")
			}
			return
		}
		_ = r.SourceAllowed(url)
		_ = r.DestinationAllowed(url, name, namespace)
		_ = r.ClusterResourceAllowed(group, kind)
		_ = r.NamespaceResourceAllowed(kind, group)
		_ = r.ResourceAllowed(group, kind, namespace, server, name)
		_ = r.AppNamespaceAllowed(namespace, "graphcd")
		_ = r.OrphanedIgnored(group, kind, orphanName)
		_ = r.SignatureKeyAllowed(url)
		at := time.Unix(unix%(1<<34), 0)
		target := WindowTarget{AppName: selector, AppNamespace: namespace, Server: server, ClusterName: name, Namespace: namespace}
		st := r.SyncWindows(target, at)
		for _, w := range st.Windows {
			if w.Active && (w.Start.After(at) || !w.End.After(at)) {
				t.Fatalf("window active at %s but its occurrence is %s..%s", at, w.Start, w.End)
			}
		}
		for _, manual := range []bool{false, true} {
			if err := r.SyncAllowed(target, at, manual); err != nil {
				var d *DeniedError
				if !errors.As(err, &d) {
					t.Fatalf("SyncAllowed error %v is not a *DeniedError", err)
				}
			}
		}
	})
}
