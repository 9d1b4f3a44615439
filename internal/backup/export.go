package backup

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// lastApplied is kubectl's annotation with the whole object as applied;
// for a Secret it holds the data.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// ExportOptions choose what Export writes.
type ExportOptions struct {
	Scope
	// IncludeSecrets adds the repository, credential template, cluster
	// and account Secrets, data included.
	IncludeSecrets bool
}

// Export writes the objects of the backup to w as one YAML stream, in
// restore order, after a comment that says what the file holds and what
// it leaves out. It returns how many objects it wrote.
func Export(ctx context.Context, dyn dynamic.Interface, o ExportOptions, w io.Writer) (int, error) {
	var objs []*unstructured.Unstructured
	for _, k := range kinds {
		if k == secretKind && !o.IncludeSecrets {
			continue
		}
		live, err := o.list(ctx, dyn, k)
		if err != nil {
			return 0, err
		}
		for _, l := range live {
			objs = append(objs, clean(l, o.Namespace))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# graphcd export of namespace %s: %d objects (settings ConfigMaps, AppProjects, Applications, ApplicationSets", o.Namespace, len(objs))
	if o.IncludeSecrets {
		b.WriteString(", Secrets).\n# This file holds Secrets' data in clear: keep it as you keep the Secrets.\n")
	} else {
		b.WriteString(").\n# Secrets are left out (export with --include-secrets): repository, credential template,\n# cluster and account Secrets must exist before, or be made after, an import.\n")
	}
	for _, obj := range objs {
		y, err := yaml.Marshal(obj.Object)
		if err != nil {
			return 0, fmt.Errorf("encode %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return 0, err
	}
	return len(objs), nil
}

// clean returns what of live its owner wrote (see the package doc), the
// namespace dropped when it is graphcd's own.
func clean(live *unstructured.Unstructured, namespace string) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for key, v := range live.Object {
		if key == "metadata" || key == "status" || (key == "operation" && live.GetKind() == appKind.gvk.Kind) {
			continue
		}
		out.Object[key] = v
	}
	out.SetName(live.GetName())
	if live.GetNamespace() != namespace {
		out.SetNamespace(live.GetNamespace())
	}
	out.SetLabels(live.GetLabels())
	annotations := live.GetAnnotations()
	delete(annotations, lastApplied)
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	out.SetFinalizers(live.GetFinalizers())
	return out.DeepCopy()
}
