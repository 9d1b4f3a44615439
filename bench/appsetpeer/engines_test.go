package appsetpeer

import (
	"strings"
	"testing"
)

// TestSameApplications checks that graphcd and Argo CD generate the same
// Applications (name, namespace, labels, project, source, destination)
// from the benchmark's input, for each template language, so that the
// benchmark compares the same work.
func TestSameApplications(t *testing.T) {
	peer := NewPeer()
	for _, c := range Cases {
		t.Run(c.Name, func(t *testing.T) {
			manifest := Manifest(c, benchApps)
			gset, err := GraphcdSet(manifest)
			if err != nil {
				t.Fatal(err)
			}
			aset, err := ArgoSet(manifest)
			if err != nil {
				t.Fatal(err)
			}
			gapps, err := Graphcd(gset)
			if err != nil {
				t.Fatal(err)
			}
			aapps, err := peer.Generate(aset)
			if err != nil {
				t.Fatal(err)
			}
			got, want := GraphcdSummary(gapps), ArgoSummary(aapps)
			if len(got) != benchApps || len(want) != benchApps {
				t.Fatalf("graphcd generated %d, Argo CD %d, want %d each", len(got), len(want), benchApps)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("application %d differs:\ngraphcd: %s\nargo cd: %s", i, got[i], want[i])
				}
			}
			const first = "c0000-guestbook argocd env=prod default https://git.example.com/apps.git main guestbook https://kubernetes.default.svc guestbook"
			if got[0] != first {
				t.Errorf("first application = %q, want %q", got[0], first)
			}
			names := map[string]bool{}
			for _, l := range got {
				names[strings.Fields(l)[0]] = true
			}
			if len(names) != benchApps {
				t.Errorf("%d distinct names, want %d", len(names), benchApps)
			}
		})
	}
}

// TestPlaceholdersRendered guards against a template that renders
// nothing: no generated field may keep a placeholder.
func TestPlaceholdersRendered(t *testing.T) {
	peer := NewPeer()
	for _, c := range Cases {
		aset, err := ArgoSet(Manifest(c, 3))
		if err != nil {
			t.Fatal(err)
		}
		apps, err := peer.Generate(aset)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ArgoSummary(apps) {
			if strings.Contains(l, "{{") {
				t.Errorf("%s: Argo CD left a placeholder: %s", c.Name, l)
			}
		}
		gset, err := GraphcdSet(Manifest(c, 3))
		if err != nil {
			t.Fatal(err)
		}
		gapps, err := Graphcd(gset)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range GraphcdSummary(gapps) {
			if strings.Contains(l, "{{") {
				t.Errorf("%s: graphcd left a placeholder: %s", c.Name, l)
			}
		}
	}
}
