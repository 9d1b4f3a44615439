// Package hydrator writes what the source hydrator commits for one
// application: the manifests rendered from a dry commit, and the files
// that say where they came from, as Argo CD's source hydrator lays them out
// in the directory of syncSource.path:
//
//	manifest.yaml      every rendered object, one YAML document each, in a stable order
//	README.md          says the directory is generated, from which repository, path and commit
//	hydrator.metadata  JSON: drySha, repoURL, author, date, subject, body of the dry commit
//
// The files depend only on the manifests and the dry commit, so hydrating
// the same commit again gives the same files and no new commit.
package hydrator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/internal/repourl"
)

// The files of a hydrated directory.
const (
	ManifestFile = "manifest.yaml"
	ReadmeFile   = "README.md"
	MetadataFile = "hydrator.metadata"
)

// DryCommit is the commit of the dry source that was rendered.
type DryCommit struct {
	// RepoURL is the dry repository; it is written without credentials.
	RepoURL string
	// Path is the directory of the dry source that was rendered.
	Path string
	// SHA is the commit's 40-hex id.
	SHA string
	// Author is "Name <email>" of the commit's author.
	Author string
	// Date is when the author made the commit.
	Date time.Time
	// Message is the commit's whole message.
	Message string
}

// Metadata is the content of hydrator.metadata, with Argo CD's keys.
type Metadata struct {
	DrySHA  string `json:"drySha"`
	RepoURL string `json:"repoURL"`
	Author  string `json:"author,omitempty"`
	Date    string `json:"date,omitempty"`
	Subject string `json:"subject,omitempty"`
	Body    string `json:"body,omitempty"`
}

// MetadataOf is the hydrator.metadata of dry.
func MetadataOf(dry DryCommit) Metadata {
	subject, body, _ := strings.Cut(dry.Message, "\n")
	m := Metadata{
		DrySHA: dry.SHA, RepoURL: repourl.Redact(dry.RepoURL), Author: dry.Author,
		Subject: strings.TrimSpace(subject), Body: strings.TrimSpace(body),
	}
	if !dry.Date.IsZero() {
		m.Date = dry.Date.UTC().Format(time.RFC3339)
	}
	return m
}

// Files returns the files of the hydrated directory by name.
func Files(objs []*unstructured.Unstructured, dry DryCommit) (map[string][]byte, error) {
	manifest, err := Manifest(objs)
	if err != nil {
		return nil, err
	}
	meta, err := json.MarshalIndent(MetadataOf(dry), "", "  ")
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		ManifestFile: manifest,
		ReadmeFile:   readme(dry),
		MetadataFile: append(meta, '\n'),
	}, nil
}

// Manifest is objs as one YAML stream, ordered by group, kind, namespace
// and name (objects equal in all four keep their order), each document
// with its keys sorted.
func Manifest(objs []*unstructured.Unstructured) ([]byte, error) {
	sorted := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if o != nil {
			sorted = append(sorted, o)
		}
	}
	key := func(o *unstructured.Unstructured) [4]string {
		gvk := o.GroupVersionKind()
		return [4]string{gvk.Group, gvk.Kind, o.GetNamespace(), o.GetName()}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := key(sorted[i]), key(sorted[j])
		for k := range a {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return false
	})
	var buf bytes.Buffer
	for i, o := range sorted {
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(doc)
	}
	return buf.Bytes(), nil
}

// Message is the message of the hydrated commit: it names the dry commit.
func Message(dry DryCommit) string {
	subject, _, _ := strings.Cut(dry.Message, "\n")
	msg := "[graphcd] hydrate " + dry.SHA
	if s := strings.TrimSpace(subject); s != "" {
		msg += "\n\nDry commit: " + s
	}
	return msg + "\n"
}

// readme says the directory is generated and how to reproduce it.
func readme(dry DryCommit) []byte {
	repo := repourl.Redact(dry.RepoURL)
	path := dry.Path
	if path == "" {
		path = "."
	}
	var b strings.Builder
	b.WriteString("# Generated manifests\n\n")
	b.WriteString("This directory is written by graphcd's source hydrator. Do not edit it:\n")
	b.WriteString("the next hydration replaces every file in it.\n\n")
	fmt.Fprintf(&b, "- Dry repository: `%s`\n", mdCode(repo))
	fmt.Fprintf(&b, "- Dry path: `%s`\n", mdCode(path))
	fmt.Fprintf(&b, "- Dry commit: `%s`\n\n", mdCode(dry.SHA))
	b.WriteString("To reproduce `manifest.yaml`, check the dry commit out and render the dry\n")
	b.WriteString("path with the tool and options of the application's drySource:\n\n")
	b.WriteString("```sh\n")
	fmt.Fprintf(&b, "git clone %s dry && cd dry\n", shellQuote(repo))
	fmt.Fprintf(&b, "git checkout %s\n", shellQuote(dry.SHA))
	fmt.Fprintf(&b, "# then, e.g.: kustomize build %s   or   helm template %s\n", shellQuote(path), shellQuote(path))
	b.WriteString("```\n\n")
	b.WriteString("`hydrator.metadata` records the dry commit's author, date and message.\n")
	return []byte(b.String())
}

// mdCode keeps s inside a Markdown code span.
func mdCode(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "\n", " ") }

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
