// Package diff compares the desired state of a Kubernetes object (as
// rendered from Git) with its live state, the way Argo CD does, as pure
// functions over unstructured objects: no cluster is contacted.
//
// A Differ is built once per set of ignore rules and reused:
//
//	d, err := diff.New(diff.Options{Ignore: []diff.IgnoreRule{{
//		Group: "apps", Kind: "Deployment",
//		JSONPointers:      []string{"/spec/replicas"},
//		JQPathExpressions: []string{`.spec.template.spec.initContainers[] | select(.name == "istio-init")`},
//	}}})
//	res, err := d.Diff(ctx, desired, live)
//	if res.Modified {
//		fmt.Print(res.Text) // unified diff, live -> desired, Secret values masked
//	}
//
// # What is compared
//
// Both sides are normalized first: server-managed metadata
// (managedFields, resourceVersion, uid, generation, creationTimestamp,
// selfLink, deletion fields), the last-applied annotation and, unless the
// kind is listed in NormalizeOptions.KeepStatusKinds, status are dropped.
// Values of known built-in fields compare by meaning: resource quantities
// ("1000m" == "1"), int-or-string ports ("80" == 80), durations of known
// CRDs ("1h" == "1h0m0s"), Secret data by decoded bytes with stringData
// folded into data and a null value read as empty (the API server
// returns a stored "" as null). Lists that strategic merge patch merges by key
// (containers, env, ports, volumes ...) are matched by key, ignoring
// order; other lists compare element by element.
//
// An empty list or map, null and an absent field are one value, on
// either side, at any depth and in every mode, as Argo CD's typed
// normalization makes them: a ClusterRole's rules: [] in Git equals the
// rules: null the API server returns, labels: {} equals no labels. A
// value that ignore rules leave empty counts as empty.
//
// In the default mode, live fields absent from desired are server
// defaults and ignored, unless live's last-applied annotation shows the
// field was applied before: then it was removed from desired, a change.
// In server-side mode (Options.ServerSide or WithServerSide) desired is
// the predicted live object from a server-side apply dry run and both
// sides must match.
//
// # Ignoring differences
//
// IgnoreRule mirrors Argo CD's ignoreDifferences: JSON pointers, jq path
// expressions (each evaluation bounded to one second) and managedFields
// managers, selected by group and kind globs, name and namespace. The
// selected fields are removed from both sides. ApplyIgnored gives sync
// (RespectIgnoreDifferences) the desired object with those fields taken
// from live.
//
// # Cost
//
// Diff works on the decoded maps directly and copies only along paths it
// changes; the normalized objects in Result share the rest with the
// inputs and are read-only. VerdictOnly stops at the first difference and
// allocates almost nothing; Text is rendered only for modified objects.
// No Secret value reaches Text, Result objects or errors; masks still
// differ wherever values differ, so a modified Secret always shows which
// key changed.
package diff
