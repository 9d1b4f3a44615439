package appsetpeer

import "testing"

// benchApps is the number of list elements, so of Applications per op.
const benchApps = 1000

// BenchmarkGenerate1000 generates the 1,000 Applications of the same
// ApplicationSet with graphcd and with Argo CD, for each template
// language, in one run. One op is the whole set.
func BenchmarkGenerate1000(b *testing.B) {
	peer := NewPeer()
	for _, c := range Cases {
		manifest := Manifest(c, benchApps)
		gset, err := GraphcdSet(manifest)
		if err != nil {
			b.Fatal(err)
		}
		aset, err := ArgoSet(manifest)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name+"/graphcd", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				apps, err := Graphcd(gset)
				if err != nil || len(apps) != benchApps {
					b.Fatalf("graphcd generated %d, err %v", len(apps), err)
				}
			}
		})
		b.Run(c.Name+"/argocd", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				apps, err := peer.Generate(aset)
				if err != nil || len(apps) != benchApps {
					b.Fatalf("argo cd generated %d, err %v", len(apps), err)
				}
			}
		})
	}
}
