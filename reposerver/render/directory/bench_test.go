package directory_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/graphcd/graphcd/reposerver/render"
	"github.com/graphcd/graphcd/reposerver/render/directory"
)

// BenchmarkRender renders a directory of 200 Deployment manifests.
//
//	go test -run '^$' -bench BenchmarkRender -benchmem ./reposerver/render/directory/
func BenchmarkRender(b *testing.B) {
	root := b.TempDir()
	for i := range 200 {
		write(b, filepath.Join(root, "app", fmt.Sprintf("deploy-%03d.yaml", i)), fmt.Sprintf(deployment, i, i, i))
	}
	req := render.Request{RepoRoot: root, Path: "app"}
	for b.Loop() {
		objs, err := directory.Render(b.Context(), req)
		if err != nil {
			b.Fatal(err)
		}
		if len(objs) != 200 {
			b.Fatalf("got %d objects, want 200", len(objs))
		}
	}
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-%d
  labels: &labels
    app.kubernetes.io/name: web-%d
    app.kubernetes.io/part-of: shop
spec:
  replicas: 2
  selector:
    matchLabels: *labels
  template:
    metadata:
      labels: *labels
    spec:
      containers:
        - name: web
          image: nginx:1.27
          ports:
            - containerPort: 8080
          env:
            - name: INSTANCE
              value: "%d"
          resources:
            requests: {cpu: 100m, memory: 64Mi}
            limits: {memory: 128Mi}
`
