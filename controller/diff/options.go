package diff

import (
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Options configures a Differ. The zero value diffs in Argo CD's default
// ("legacy") mode with no ignore rules.
type Options struct {
	// Ignore lists the ignoreDifferences rules of the Application and of
	// the system-level resource customizations, in any order.
	Ignore []IgnoreRule
	// Normalize tunes normalization.
	Normalize NormalizeOptions
	// ServerSide selects server-side diff for every call: desired is then
	// the result of a server-side apply dry run (the predicted live
	// object) and fields present only in live count as differences.
	ServerSide bool
	// IgnoreExtraneous makes every live object without a desired
	// counterpart leave Result.Modified false, as the per-object
	// annotation "argocd.argoproj.io/compare-options: IgnoreExtraneous"
	// does for one object.
	IgnoreExtraneous bool
}

// NormalizeOptions tunes the normalization applied to both sides.
type NormalizeOptions struct {
	// KeepStatusKinds lists the kinds whose status is compared. The
	// status of every other kind is dropped (Argo CD's
	// ignoreResourceStatusField: all).
	KeepStatusKinds []schema.GroupKind
}

// IgnoreRule is one ignoreDifferences entry. Group and Kind are glob
// patterns ("*" matches any); an empty Group means the core group, as in
// Argo CD, and an empty Kind matches any kind. Name and Namespace, when
// set, must match exactly.
type IgnoreRule struct {
	Group, Kind, Name, Namespace string
	// JSONPointers are RFC 6901 pointers removed from both sides.
	JSONPointers []string
	// JQPathExpressions are jq path expressions removed from both sides;
	// each evaluation runs at most one second, and constructs whose one
	// step could outlast that (loops, definitions, string building,
	// large regular expressions) are refused by New.
	JQPathExpressions []string
	// ManagedFieldsManagers names managers whose fields (per live's
	// metadata.managedFields) are removed from both sides.
	ManagedFieldsManagers []string
}

type jqExpr struct {
	src  string
	code *gojq.Code
}

type compiledRule struct {
	group, kind, name, namespace string
	pointers                     *ignNode
	jq                           []jqExpr
	managers                     []string
}

// Differ compares desired with live objects. It is safe for concurrent
// use; build one per set of rules (per Application) and reuse it.
type Differ struct {
	rules      []compiledRule
	keepStatus map[schema.GroupKind]bool
	serverSide bool
	ignoreExtr bool
	// static caches the merged pointer trie per set of matching rules.
	static sync.Map // staticKey -> *ignNode
}

type staticKey struct {
	mask       uint64
	keepStatus bool
}

// New validates and compiles opts: every glob, JSON pointer and jq
// expression is checked here so that Diff never meets a malformed rule.
func New(opts Options) (*Differ, error) {
	d := &Differ{
		serverSide: opts.ServerSide,
		ignoreExtr: opts.IgnoreExtraneous,
		keepStatus: map[schema.GroupKind]bool{},
	}
	for _, gk := range opts.Normalize.KeepStatusKinds {
		d.keepStatus[gk] = true
	}
	for i, r := range opts.Ignore {
		cr, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("ignoreDifferences[%d] (group %q, kind %q): %w", i, r.Group, r.Kind, err)
		}
		d.rules = append(d.rules, cr)
	}
	return d, nil
}

func compileRule(r IgnoreRule) (compiledRule, error) {
	cr := compiledRule{group: r.Group, kind: r.Kind, name: r.Name, namespace: r.Namespace}
	if cr.kind == "" {
		cr.kind = "*"
	}
	for _, pat := range []string{cr.group, cr.kind} {
		if _, err := path.Match(pat, ""); err != nil {
			return cr, fmt.Errorf("bad pattern %q: %w", pat, err)
		}
	}
	for _, p := range r.JSONPointers {
		toks, err := parsePointer(p)
		if err != nil {
			return cr, fmt.Errorf("json pointer %q: %w", p, err)
		}
		if cr.pointers == nil {
			cr.pointers = &ignNode{}
		}
		cr.pointers.addPointer(toks)
	}
	for _, src := range r.JQPathExpressions {
		code, err := compileJQ(src)
		if err != nil {
			return cr, fmt.Errorf("jq path expression %q: %w", src, err)
		}
		cr.jq = append(cr.jq, jqExpr{src: src, code: code})
	}
	for _, m := range r.ManagedFieldsManagers {
		if m == "" {
			return cr, errors.New("empty managedFieldsManagers entry")
		}
	}
	cr.managers = append(cr.managers, r.ManagedFieldsManagers...)
	return cr, nil
}

func (r *compiledRule) matches(gk schema.GroupKind, name, namespace string) bool {
	if ok, _ := path.Match(r.group, gk.Group); !ok {
		return false
	}
	if ok, _ := path.Match(r.kind, gk.Kind); !ok {
		return false
	}
	return (r.name == "" || r.name == name) && (r.namespace == "" || r.namespace == namespace)
}

// builtinIgnored lists the server-managed metadata that never takes part
// in a comparison, as JSON pointers.
var builtinIgnored = []string{
	"/metadata/managedFields",
	"/metadata/resourceVersion",
	"/metadata/uid",
	"/metadata/generation",
	"/metadata/creationTimestamp",
	"/metadata/selfLink",
	"/metadata/deletionTimestamp",
	"/metadata/deletionGracePeriodSeconds",
	"/metadata/annotations/" + escapePointer(LastAppliedAnnotation),
}

func escapePointer(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

func builtinTrie(keepStatus bool) *ignNode {
	n := &ignNode{}
	for _, p := range builtinIgnored {
		toks, _ := parsePointer(p)
		n.addPointer(toks)
	}
	if !keepStatus {
		n.addPointer([]string{"status"})
	}
	return n
}

// staticTrie returns the merged trie of built-in normalization and the
// JSON pointers of the matching rules.
func (d *Differ) staticTrie(matched []int, keepStatus bool) *ignNode {
	var mask uint64
	cacheable := true
	for _, i := range matched {
		if d.rules[i].pointers == nil {
			continue
		}
		if i >= 64 {
			cacheable = false
			break
		}
		mask |= 1 << uint(i)
	}
	key := staticKey{mask: mask, keepStatus: keepStatus}
	if cacheable {
		if n, ok := d.static.Load(key); ok {
			return n.(*ignNode)
		}
	}
	n := builtinTrie(keepStatus)
	for _, i := range matched {
		n.merge(d.rules[i].pointers)
	}
	if cacheable {
		d.static.Store(key, n)
	}
	return n
}
