// Package admin holds graphcd's operators' tools, "graphcd admin": render
// an application source's manifests as the repository server would (render),
// judge health (health), diff desired against live objects (diff), plan a
// sync (sync-plan), check an RBAC policy (rbac) and list or try resource
// actions (actions), all offline with the
// same code as the server and the controller; and, in the cluster, rotate
// the key that signs sessions (rotate-session-key) and back graphcd's
// state up and restore it (export, import), and move a running Argo CD's
// objects and settings over (import-argocd). Files are read with
// "-" for stdin; unreadable documents are reported in place.
package admin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/internal/settings"
	"github.com/graphcd/graphcd/reposerver/render"
)

// NewCommand returns "graphcd admin", which groups the operators' tools:
// most run offline, with the same code paths as the server;
// rotate-session-key changes the cluster. kubeconfig points at the root
// command's --kubeconfig value, read when a command runs.
func NewCommand(kubeconfig *string) *cobra.Command {
	c := &cobra.Command{
		Use:   "admin",
		Short: "Operators' tools: render manifests, judge health, diff objects, check RBAC, try resource actions and notifications, rotate the session key, export and import graphcd's state, import a running Argo CD",
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newHealthCmd(), newDiffCmd(), newRenderCmd(), newSyncPlanCmd(), newRBACCmd(), newAppSetCmd(), newActionsCmd(), newNotificationsCmd(), newRotateSessionKeyCmd(kubeconfig), newExportCmd(kubeconfig), newImportCmd(kubeconfig), newImportArgoCDCmd(kubeconfig))
	return c
}

// document is one YAML/JSON document of an input file, decoded into its
// objects (a List gives several) or an error naming the document.
type document struct {
	index int // 1-based
	objs  []*unstructured.Unstructured
	err   error
}

// splitDocuments decodes each document of a file on its own, so one bad
// document does not hide the judgement of the others.
func splitDocuments(name string, data []byte) []document {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for i := 1; ; i++ {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			return append(docs, document{index: i, err: fmt.Errorf("%s: document %d: %w", name, i, err)})
		}
		if len(bytes.TrimSpace(stripComments(chunk))) == 0 {
			i--
			continue
		}
		objs, err := render.Decode(fmt.Sprintf("%s document %d", name, i), chunk, render.Limits{})
		docs = append(docs, document{index: i, objs: objs, err: err})
	}
}

// stripComments drops comment-only lines, to tell empty documents apart.
func stripComments(b []byte) []byte {
	var out [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// loadSettings parses --settings, or returns the defaults.
func loadSettings(c *cobra.Command, path string) (*settings.Settings, error) {
	if path == "" {
		return settings.Parse(nil)
	}
	b, err := command.ReadInput(c, path)
	if err != nil {
		return nil, err
	}
	s, err := settings.ParseConfigMap(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
