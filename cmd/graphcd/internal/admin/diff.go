package admin

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
	"github.com/graphcd/graphcd/controller/cache"
	"github.com/graphcd/graphcd/controller/diff"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/controller/sync"
)

type adminDiffOptions struct {
	desired, live, settings, app, namespace string
	serverSide                              bool
}

func newDiffCmd() *cobra.Command {
	o := &adminDiffOptions{}
	c := &cobra.Command{
		Use:   "diff --desired FILE --live FILE",
		Short: "Diff desired and live objects as the controller would",
		Long: `Compare the objects in --desired (what Git renders) with those in --live (what
the cluster holds), YAML or JSON, matched by group, kind, namespace and name.
Kubernetes defaults are ignored (three-way with the last-applied annotation),
ignoreDifferences from --settings (graphcd-cm / argocd-cm) and from --app (an
Application's spec.ignoreDifferences) apply, and Secret values are masked.

As the controller does, a desired object without a namespace is compared in
the destination namespace: --namespace, else --app's
spec.destination.namespace. Cluster-scoped kinds get none: the built-in
ones, kinds whose CustomResourceDefinition is in --desired or --live, and
kinds whose objects in --live have no namespace. With --app, desired objects
also get the app's tracking annotation (or label: the tracking method of
--settings), as the controller marks what it applies.

Prints a unified diff per differing object. Exit code 0 when everything is
equal, 1 when something differs, 2 on error.`,
		Args: command.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			modified, err := runAdminDiff(c, o)
			switch {
			case err != nil:
				return command.ExitCodeError{Code: command.ExitUsage, Err: err}
			case modified:
				return command.ExitCodeError{Code: command.ExitError}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.desired, "desired", "", "file with the desired objects (- for stdin)")
	f.StringVar(&o.live, "live", "", "file with the live objects")
	f.StringVar(&o.settings, "settings", "", "graphcd-cm / argocd-cm ConfigMap with diff customizations")
	f.StringVar(&o.app, "app", "", "Application manifest whose spec.ignoreDifferences and destination namespace apply")
	f.StringVar(&o.namespace, "namespace", "", "destination namespace for desired objects without one (default: --app's spec.destination.namespace)")
	f.BoolVar(&o.serverSide, "server-side", false, "treat --desired as the result of a server-side apply dry run")
	_ = c.MarkFlagRequired("desired")
	_ = c.MarkFlagRequired("live")
	return c
}

type objKey struct{ group, kind, namespace, name string }

func keyOf(o *unstructured.Unstructured) objKey {
	gvk := o.GroupVersionKind()
	return objKey{gvk.Group, gvk.Kind, o.GetNamespace(), o.GetName()}
}

func (k objKey) String() string {
	s := k.kind + "/" + k.name
	if k.group != "" {
		s = k.group + "/" + s
	}
	if k.namespace != "" {
		s = k.namespace + "/" + s
	}
	return s
}

func runAdminDiff(c *cobra.Command, o *adminDiffOptions) (bool, error) {
	s, err := loadSettings(c, o.settings)
	if err != nil {
		return false, err
	}
	var app v1alpha1.Application
	if o.app != "" {
		b, err := command.ReadInput(c, o.app)
		if err != nil {
			return false, err
		}
		if err := yaml.Unmarshal(b, &app); err != nil {
			return false, fmt.Errorf("%s: %w", o.app, err)
		}
	}
	d, err := diff.New(diff.Options{Ignore: engineopts.IgnoreRules(s, app.Spec.IgnoreDifferences), ServerSide: o.serverSide})
	if err != nil {
		return false, err
	}
	desiredObjs, err := readObjects(c, o.desired)
	if err != nil {
		return false, err
	}
	liveObjs, err := readObjects(c, o.live)
	if err != nil {
		return false, err
	}
	namespace := cmp.Or(o.namespace, app.Spec.Destination.Namespace)
	scope := sync.OfflineScope(desiredObjs, liveObjs)
	tracking := cache.Tracking{Method: s.TrackingMethod, LabelKey: s.InstanceLabelKey}
	for i, obj := range desiredObjs {
		obj = sync.DefaultNamespace(obj, namespace, scope)
		if app.Name != "" {
			tracking.Mark(obj, obj.GroupVersionKind().GroupKind(), app.Name, namespace)
		}
		desiredObjs[i] = obj
	}
	desired, err := objectsByKey(o.desired, desiredObjs)
	if err != nil {
		return false, err
	}
	live, err := objectsByKey(o.live, liveObjs)
	if err != nil {
		return false, err
	}
	keys := make([]objKey, 0, len(desired)+len(live))
	for k := range desired {
		keys = append(keys, k)
	}
	for k := range live {
		if _, ok := desired[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b objKey) int { return cmp.Compare(a.String(), b.String()) })
	modified := false
	out := c.OutOrStdout()
	for _, k := range keys {
		res, err := d.Diff(c.Context(), desired[k], live[k])
		if err != nil {
			return false, fmt.Errorf("%s: %w", k, err)
		}
		if !res.Modified {
			continue
		}
		modified = true
		if err := printDiff(out, k, res); err != nil {
			return false, err
		}
	}
	return modified, nil
}

func printDiff(out io.Writer, k objKey, res *diff.Result) error {
	header := "===== " + k.String()
	switch {
	case res.Missing:
		header += " (missing from the cluster)"
	case res.Extraneous:
		header += " (not in Git)"
	}
	_, err := fmt.Fprintf(out, "%s\n%s", header, res.Unified())
	return err
}

// readObjects reads the objects of a file, refusing unreadable documents.
func readObjects(c *cobra.Command, path string) ([]*unstructured.Unstructured, error) {
	data, err := command.ReadInput(c, path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, doc := range splitDocuments(path, data) {
		if doc.err != nil {
			return nil, doc.err
		}
		objs = append(objs, doc.objs...)
	}
	return objs, nil
}

// objectsByKey indexes the objects read from path, refusing duplicates (a
// diff needs to know which object is which).
func objectsByKey(path string, list []*unstructured.Unstructured) (map[objKey]*unstructured.Unstructured, error) {
	objs := make(map[objKey]*unstructured.Unstructured, len(list))
	for _, obj := range list {
		k := keyOf(obj)
		if _, dup := objs[k]; dup {
			return nil, fmt.Errorf("%s: %s appears twice", path, k)
		}
		objs[k] = obj
	}
	return objs, nil
}
