package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// LastAppliedAnnotation is the annotation in which kubectl and Argo CD
// record the configuration of the last client-side apply.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Result is the outcome of one comparison.
type Result struct {
	// Modified reports that the object is out of sync: desired and live
	// differ after normalization, desired has no live object yet, or live
	// has no desired object (unless extraneous objects are ignored).
	Modified bool
	// Missing reports that live is nil (the object must be created).
	Missing bool
	// Extraneous reports that desired is nil (a prune candidate).
	Extraneous bool
	// Desired is the predicted live object: desired with server defaults
	// taken from live, canonical spellings, ignored fields removed.
	// Live is live with server-managed metadata, status and ignored
	// fields removed. Both share unchanged subtrees with the inputs and
	// must be treated as read-only. Secret values are masked. Both are
	// nil when the call asked for VerdictOnly.
	Desired, Live *unstructured.Unstructured
	// Text is a unified diff (live -> desired) of the normalized objects
	// as YAML with sorted keys. Diff fills it only when Modified, unless
	// WithoutText was given; Unified computes it on demand.
	Text string
}

// Unified returns the unified diff of r.Live and r.Desired, computing and
// caching it in r.Text on first use.
func (r *Result) Unified() string {
	if r.Text != "" || !r.Modified {
		return r.Text
	}
	var a, b map[string]any
	if r.Live != nil {
		a = r.Live.Object
	}
	if r.Desired != nil {
		b = r.Desired.Object
	}
	r.Text = unifiedYAML(a, b)
	return r.Text
}

// CallOption adjusts one Diff call.
type CallOption func(*callOptions)

type callOptions struct {
	serverSide    *bool
	verdictOnly   bool
	noText        bool
	ignoreExtrSet bool
}

// WithServerSide overrides Options.ServerSide for one call, e.g. from the
// object's "argocd.argoproj.io/compare-options: ServerSideDiff=true".
func WithServerSide(on bool) CallOption {
	return func(o *callOptions) { o.serverSide = &on }
}

// VerdictOnly computes Modified alone: no normalized objects and no text
// are built, and the comparison stops at the first difference. It is the
// path for periodic sync-status checks.
func VerdictOnly() CallOption {
	return func(o *callOptions) { o.verdictOnly = true }
}

// WithoutText builds the normalized objects but leaves Text empty;
// Result.Unified renders it later if needed.
func WithoutText() CallOption {
	return func(o *callOptions) { o.noText = true }
}

// IgnoreExtraneous treats a nil desired as in sync for this call.
func IgnoreExtraneous() CallOption {
	return func(o *callOptions) { o.ignoreExtrSet = true }
}

// Diff compares desired with live. A nil desired means live is not
// wanted (extraneous); a nil live means desired must be created. In the
// default mode, when live carries the last-applied annotation, fields set
// only in live and absent from that annotation are server defaults and are
// ignored, while fields in the annotation but no longer in desired are
// removals; without the annotation any field only in live is ignored. In
// server-side mode desired is the dry-run result and both sides must match.
func (d *Differ) Diff(ctx context.Context, desired, live *unstructured.Unstructured, opts ...CallOption) (*Result, error) {
	var co callOptions
	for _, o := range opts {
		o(&co)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	var dObj, lObj map[string]any
	if desired != nil {
		dObj = desired.Object
	}
	if live != nil {
		lObj = live.Object
	}
	if dObj == nil && lObj == nil {
		return nil, errors.New("diff: desired and live are both nil")
	}
	serverSide := d.serverSide
	if co.serverSide != nil {
		serverSide = *co.serverSide
	}
	ref := dObj
	if ref == nil {
		ref = lObj
	}
	gk := groupKind(ref)
	name, namespace := metaString(dObj, "name"), metaString(dObj, "namespace")
	if name == "" {
		name = metaString(lObj, "name")
	}
	if namespace == "" {
		namespace = metaString(lObj, "namespace")
	}
	isSecret := gk == schema.GroupKind{Kind: "Secret"}
	if isSecret {
		dObj, lObj = normalizeSecret(dObj), normalizeSecret(lObj)
	}

	cd, cl, err := d.cursors(ctx, gk, name, namespace, dObj, lObj)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s/%s: %w", gk, namespace, name, err)
	}
	build := !co.verdictOnly
	res := &Result{}
	switch {
	case lObj == nil:
		res.Missing, res.Modified = true, true
		if build {
			p, _ := prune(dObj, cd)
			res.Desired = &unstructured.Unstructured{Object: p.(map[string]any)}
		}
	case dObj == nil:
		res.Extraneous = true
		ignored := d.ignoreExtr || co.ignoreExtrSet || Compare(live).IgnoreExtraneous
		res.Modified = !ignored
		if build {
			n, _ := prune(lObj, cl)
			res.Live = &unstructured.Unstructured{Object: n.(map[string]any)}
		}
	default:
		w := walker{symmetric: serverSide, build: build}
		if !serverSide {
			w.laRaw = lastAppliedRaw(lObj)
			w.threeWay, w.pending = w.laRaw != "", w.laRaw != ""
		}
		r := w.walk(dObj, lObj, nil, knownTypes[gk], cd, cl)
		if w.abort {
			la := parseLastApplied(w.laRaw, isSecret)
			w = walker{symmetric: serverSide, build: build, threeWay: la != nil}
			r = w.walk(dObj, lObj, la, knownTypes[gk], cd, cl)
		}
		res.Modified = !r.eq
		if build {
			p, _ := r.p.(map[string]any)
			n, _ := r.n.(map[string]any)
			res.Desired = &unstructured.Unstructured{Object: p}
			res.Live = &unstructured.Unstructured{Object: n}
		}
	}
	if !build {
		return res, nil
	}
	if isSecret {
		maskResult(res)
	}
	if res.Modified && !co.noText {
		res.Unified()
	}
	return res, nil
}

// cursors builds the ignore cursors of the desired and the live side.
func (d *Differ) cursors(ctx context.Context, gk schema.GroupKind, name, namespace string, dObj, lObj map[string]any) (cd, cl cursor, err error) {
	var matched []int
	var managers map[string]bool
	var exprs []jqExpr
	for i := range d.rules {
		r := &d.rules[i]
		if !r.matches(gk, name, namespace) {
			continue
		}
		matched = append(matched, i)
		exprs = append(exprs, r.jq...)
		for _, m := range r.managers {
			if managers == nil {
				managers = map[string]bool{}
			}
			managers[m] = true
		}
	}
	static := d.staticTrie(matched, d.keepStatus[gk])
	cd.a, cl.a = static, static
	if cd.b, err = jqPaths(ctx, exprs, dObj); err != nil {
		return cd, cl, err
	}
	if cl.b, err = jqPaths(ctx, exprs, lObj); err != nil {
		return cd, cl, err
	}
	if managers != nil {
		mf := managedTrie(lObj, managers)
		cd.c, cl.c = mf, mf
	}
	return cd, cl, nil
}

// managedTrie collects the fields that the given managers own in live.
func managedTrie(live map[string]any, managers map[string]bool) *ignNode {
	meta, _ := live["metadata"].(map[string]any)
	entries, _ := meta["managedFields"].([]any)
	var root *ignNode
	for _, e := range entries {
		m, _ := e.(map[string]any)
		mgr, _ := m["manager"].(string)
		if !managers[mgr] {
			continue
		}
		if ft, ok := m["fieldsType"].(string); ok && ft != "FieldsV1" {
			continue
		}
		set, _ := m["fieldsV1"].(map[string]any)
		if len(set) == 0 {
			continue
		}
		if root == nil {
			root = &ignNode{}
		}
		root.addFieldsV1(set)
	}
	if root != nil && root.fields != nil {
		// server-managed metadata is dropped anyway; never let ownership of
		// managedFields itself matter
		if md := root.fields["metadata"]; md != nil && md.fields != nil {
			delete(md.fields, "managedFields")
		}
	}
	return root
}

func lastAppliedRaw(live map[string]any) string {
	meta, _ := live["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, _ := ann[LastAppliedAnnotation].(string)
	return s
}

// parseLastApplied reads the last-applied annotation; an unreadable one is
// treated as absent (two-way mode), and its content never reaches errors.
func parseLastApplied(s string, isSecret bool) any {
	var la map[string]any
	if json.Unmarshal([]byte(s), &la) != nil || la == nil {
		return nil
	}
	if isSecret {
		return normalizeSecret(la)
	}
	return la
}

func groupKind(obj map[string]any) schema.GroupKind {
	av, _ := obj["apiVersion"].(string)
	k, _ := obj["kind"].(string)
	gv, _ := schema.ParseGroupVersion(av)
	return schema.GroupKind{Group: gv.Group, Kind: k}
}

func metaString(obj map[string]any, key string) string {
	meta, _ := obj["metadata"].(map[string]any)
	s, _ := meta[key].(string)
	return s
}
