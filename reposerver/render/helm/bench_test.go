package helm

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/reposerver/render"
)

// BenchmarkRender renders a chart of 30 templates (Deployments, Services
// and ConfigMaps sharing helpers) in-process, values and parameters
// included, as one Argo CD refresh of a Helm application does.
func BenchmarkRender(b *testing.B) {
	root := writeBenchChart(b)
	req := render.Request{
		RepoRoot: root, Path: "chart", AppName: "bench", Namespace: "bench",
		Source: v1alpha1.ApplicationSource{Helm: &v1alpha1.ApplicationSourceHelm{
			Parameters: []v1alpha1.HelmParameter{{Name: "image.tag", Value: "1.28"}},
		}},
	}
	b.ReportAllocs()
	for b.Loop() {
		objs, err := Render(b.Context(), req, ChartSource{})
		if err != nil {
			b.Fatal(err)
		}
		if len(objs) != 30 {
			b.Fatalf("rendered %d objects, want 30", len(objs))
		}
	}
}

// writeBenchChart writes the 30-template benchmark chart to <root>/chart
// and returns root.
func writeBenchChart(b testing.TB) string {
	root := b.TempDir()
	dir := filepath.Join(root, "chart")
	writeFile(b, filepath.Join(dir, "Chart.yaml"), "apiVersion: v2\nname: bench\nversion: 1.0.0\n")
	writeFile(b, filepath.Join(dir, "values.yaml"), "replicas: 2\nimage: {repository: nginx, tag: \"1.27\"}\nenv: {LOG_LEVEL: info, MODE: prod}\n")
	writeFile(b, filepath.Join(dir, "templates", "_helpers.tpl"), `{{- define "bench.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}
`)
	for i := range 10 {
		writeFile(b, filepath.Join(dir, "templates", fmt.Sprintf("deploy-%02d.yaml", i)), fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-svc%[1]d
  labels:
    {{- include "bench.labels" . | nindent 4 }}
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels:
      {{- include "bench.labels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "bench.labels" . | nindent 8 }}
    spec:
      containers:
        - name: main
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          env:
            {{- range $k, $v := .Values.env }}
            - name: {{ $k }}
              value: {{ $v | quote }}
            {{- end }}
`, i))
		writeFile(b, filepath.Join(dir, "templates", fmt.Sprintf("service-%02d.yaml", i)), fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-svc%[1]d
  labels:
    {{- include "bench.labels" . | nindent 4 }}
spec:
  selector:
    {{- include "bench.labels" . | nindent 4 }}
  ports:
    - port: 80
      targetPort: 8080
`, i))
		writeFile(b, filepath.Join(dir, "templates", fmt.Sprintf("config-%02d.yaml", i)), fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg%[1]d
data:
  {{- range $k, $v := .Values.env }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
  tag: {{ .Values.image.tag | quote }}
`, i))
	}
	return root
}
