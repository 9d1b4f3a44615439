package hydrator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}}}
	if ns != "" {
		o.SetNamespace(ns)
	}
	return o
}

func TestManifestOrder(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("apps/v1", "Deployment", "b", "web"),
		obj("v1", "ConfigMap", "b", "z"),
		obj("v1", "ConfigMap", "a", "y"),
		obj("apps/v1", "Deployment", "a", "web"),
	}
	got, err := Manifest(objs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, doc := range strings.Split(string(got), "---\n") {
		var m struct {
			Kind     string `json:"kind"`
			Metadata struct{ Namespace, Name string }
		}
		if err := json.Unmarshal(mustJSON(t, doc), &m); err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Kind+"/"+m.Metadata.Namespace+"/"+m.Metadata.Name)
	}
	want := []string{"ConfigMap/a/y", "ConfigMap/b/z", "Deployment/a/web", "Deployment/b/web"}
	if diff := cmp.Diff(names, want); diff != "" {
		t.Errorf("order (-got +want):\n%s", diff)
	}
	// The input order does not matter.
	again, _ := Manifest([]*unstructured.Unstructured{objs[3], objs[2], objs[1], objs[0]})
	if string(again) != string(got) {
		t.Errorf("manifest depends on input order:\n%s\nvs\n%s", again, got)
	}
}

func TestFiles(t *testing.T) {
	dry := DryCommit{
		RepoURL: "https://user:hunter2@git.example.com/org/dry.git", Path: "apps/web", SHA: strings.Repeat("ab", 20),
		Author: "Dev <dev@example.com>", Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)),
		Message: "Bump replicas\n\nBecause load.\n",
	}
	files, err := Files([]*unstructured.Unstructured{obj("v1", "ConfigMap", "", "c")}, dry)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]string
	if err := json.Unmarshal(files[MetadataFile], &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"drySha": dry.SHA, "repoURL": "https://user:***@git.example.com/org/dry.git", "author": "Dev <dev@example.com>",
		"date": "2026-01-02T02:04:05Z", "subject": "Bump replicas", "body": "Because load.",
	}
	if diff := cmp.Diff(meta, want); diff != "" {
		t.Errorf("metadata (-got +want):\n%s", diff)
	}
	for name, data := range files {
		if strings.Contains(string(data), "hunter2") {
			t.Errorf("%s carries the dry URL's password", name)
		}
	}
	if readme := string(files[ReadmeFile]); !strings.Contains(readme, dry.SHA) || !strings.Contains(readme, "apps/web") {
		t.Errorf("README does not name the dry commit and path:\n%s", readme)
	}
	if msg := Message(dry); !strings.Contains(msg, dry.SHA) {
		t.Errorf("message %q does not name the dry commit", msg)
	}
}

func mustJSON(t *testing.T, doc string) []byte {
	t.Helper()
	b, err := yamlToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func yamlToJSON(b []byte) ([]byte, error) { return yaml.YAMLToJSON(b) }
