package diff

import (
	"strconv"
	"strings"
)

// walker compares a desired value with a live one in a single pass and,
// when build is set, produces the normalized pair: the predicted live
// value (desired with server defaults, canonical spellings and ignored
// paths resolved) and the normalized live value. Outputs share every
// unchanged subtree with the inputs; maps and lists are copied only along
// paths that change, so inputs are never mutated.
type walker struct {
	threeWay  bool // live carries a last-applied configuration
	symmetric bool // server-side diff: fields only in live are real changes
	build     bool // produce normalized outputs, not only the verdict
	// pending: the last-applied configuration (laRaw) is not parsed yet.
	// Most fields only in live are server defaults whose names never occur
	// in it; a cheap substring test proves that. When a name might occur,
	// the walk aborts and Diff runs it again with the parsed annotation.
	pending bool
	abort   bool
	laRaw   string
}

// stop reports whether a walk should return after a child differed.
func (w *walker) stop() bool { return !w.build || w.abort }

// mayBeApplied reports whether s could occur as a JSON string (a key or
// value) in the last-applied configuration; false is certain.
func (w *walker) mayBeApplied(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return true // may be escaped in JSON; do not guess
		}
	}
	if s == "" {
		return strings.Contains(w.laRaw, `""`)
	}
	raw := w.laRaw
	for {
		i := strings.Index(raw, s)
		if i < 0 {
			return false
		}
		if i > 0 && raw[i-1] == '"' && i+len(s) < len(raw) && raw[i+len(s)] == '"' {
			return true
		}
		raw = raw[i+1:]
	}
}

// mayBeAppliedValue is mayBeApplied for a list merge key's value.
func (w *walker) mayBeAppliedValue(v any) bool {
	switch x := v.(type) {
	case string:
		return w.mayBeApplied(x)
	case int64:
		return strings.Contains(w.laRaw, strconv.FormatInt(x, 10))
	}
	return true
}

// res is the outcome of comparing one value: p is the predicted value and
// n the normalized live value; pc/nc report that they differ from the
// desired/live inputs; eq that the two sides match.
type res struct {
	p, n   any
	pc, nc bool
	eq     bool
}

func (w *walker) walk(d, l, la any, sc *schemaNode, cd, cl cursor) res {
	switch dv := d.(type) {
	case map[string]any:
		if lv, ok := l.(map[string]any); ok {
			lam, _ := la.(map[string]any)
			return w.walkMap(dv, lv, lam, sc, cd, cl)
		}
	case []any:
		if lv, ok := l.([]any); ok {
			lal, _ := la.([]any)
			if sc != nil && sc.mergeKey != "" && !w.symmetric {
				if r, ok := w.walkKeyed(dv, lv, lal, sc, cd, cl); ok {
					return r
				}
			}
			return w.walkList(dv, lv, lal, sc, cd, cl)
		}
	default:
		if scalarEqual(d, l) {
			return res{p: d, n: l, eq: true}
		}
		if sc != nil && sc.canon != canonNone && canonEqual(sc.canon, d, l) {
			// the live spelling is the canonical one the API server chose
			return res{p: l, n: l, pc: true, eq: true}
		}
	}
	r := res{p: d, n: l}
	if w.build || d == nil || l == nil {
		r.p, r.pc = prune(d, cd)
		r.n, r.nc = prune(l, cl)
	}
	if (d == nil || l == nil) && isEmpty(r.p) && isEmpty(r.n) {
		// [] or {} (or what ignored fields leave) against null: typed
		// encoders write either for an empty field (a ClusterRole's
		// rules: [] comes back as rules: null)
		return res{p: r.n, n: r.n, pc: true, nc: r.nc, eq: true}
	}
	return r
}

// isEmpty reports whether v is null, an empty map or an empty list: a
// value that asks for nothing, so that it equals an absent field.
func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return v == nil
}

func cloneMap(m map[string]any, extra int) map[string]any {
	out := make(map[string]any, len(m)+extra)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (w *walker) walkMap(dm, lm, lam map[string]any, sc *schemaNode, cd, cl cursor) res {
	eq := true
	var pm, nm map[string]any // copy-on-write outputs
	setP := func(k string, v any) {
		if pm == nil {
			pm = cloneMap(dm, 4)
		}
		pm[k] = v
	}
	setN := func(k string, v any, del bool) {
		if nm == nil {
			nm = cloneMap(lm, 0)
		}
		if del {
			delete(nm, k)
		} else {
			nm[k] = v
		}
	}
	for k, dv := range dm {
		ccd, dIgn := cd.field(k)
		if dIgn {
			if w.build {
				if pm == nil {
					pm = cloneMap(dm, 4)
				}
				delete(pm, k)
			}
			continue
		}
		ccl, lIgn := cl.field(k)
		lv, inLive := lm[k]
		if dv == nil || (isEmpty(dv) && (!inLive || lIgn)) {
			// null and empty collections are what typed encoders omit: as
			// in Argo CD they do not ask for anything
			if w.build {
				if pm == nil {
					pm = cloneMap(dm, 4)
				}
				delete(pm, k)
			}
			continue
		}
		if !inLive || lIgn {
			pv, changed := prune(dv, ccd)
			if changed && isEmpty(pv) {
				// nothing is left to ask for once ignored fields are gone
				if w.build {
					if pm == nil {
						pm = cloneMap(dm, 4)
					}
					delete(pm, k)
				}
				continue
			}
			eq = false
			if !w.build {
				return res{}
			}
			if changed {
				setP(k, pv)
			}
			continue
		}
		var lav any
		if lam != nil {
			lav = lam[k]
		}
		r := w.walk(dv, lv, lav, sc.field(k), ccd, ccl)
		if !r.eq {
			eq = false
			if w.stop() {
				return res{}
			}
		}
		if r.pc {
			setP(k, r.p)
		}
		if r.nc {
			setN(k, r.n, false)
		}
	}
	for k, lv := range lm {
		ccl, lIgn := cl.field(k)
		if lIgn {
			if w.build {
				setN(k, nil, true)
			}
			continue
		}
		if dv, inDesired := dm[k]; inDesired && dv != nil {
			if _, dIgn := cd.field(k); !dIgn {
				continue
			}
		}
		// k exists only in live. An empty or null live value equals the
		// absent desired one whatever the last apply held; an empty value in
		// the last apply (kubectl writes "annotations": {}) asked for
		// nothing, so removes nothing.
		removed := false
		if !isEmpty(lv) {
			if w.pending && !w.symmetric && w.mayBeApplied(k) {
				w.abort = true
				return res{}
			}
			lastV, inLast := lam[k]
			removed = w.symmetric || (w.threeWay && inLast && !isEmpty(lastV))
		}
		nv, changed := lv, false
		if removed || w.build {
			nv, changed = prune(lv, ccl)
			removed = removed && (!changed || !isEmpty(nv))
		}
		if removed {
			eq = false // removed from desired since the last apply
			if !w.build {
				return res{}
			}
			if changed {
				setN(k, nv, false)
			}
			continue
		}
		// a server default, a field set by someone else or one that is
		// empty once ignored fields are gone: keep live's
		if w.build {
			if changed {
				setN(k, nv, false)
			}
			setP(k, nv)
		}
	}
	r := res{p: dm, n: lm, eq: eq}
	if pm != nil {
		r.p, r.pc = pm, true
	}
	if nm != nil {
		r.n, r.nc = nm, true
	}
	return r
}

// visible returns the indices of list elements that no ignore rule drops,
// or nil when none is dropped.
func visible(l []any, c cursor) ([]int, []cursor) {
	if c.empty() {
		return nil, nil
	}
	var idx []int
	curs := make([]cursor, 0, len(l))
	dropped := false
	for i, v := range l {
		cc, all := c.elem(i, v)
		if all {
			dropped = true
			continue
		}
		idx = append(idx, i)
		curs = append(curs, cc)
	}
	if !dropped {
		return nil, curs
	}
	if idx == nil {
		idx = []int{}
	}
	return idx, curs
}

func pick(l []any, idx []int) []any {
	if idx == nil {
		return l
	}
	out := make([]any, len(idx))
	for j, i := range idx {
		out[j] = l[i]
	}
	return out
}

func cursorAt(curs []cursor, i int) cursor {
	if curs == nil {
		return cursor{}
	}
	return curs[i]
}

// walkList compares lists element by element (atomic lists, as JSON merge
// patch and server-side apply treat them).
func (w *walker) walkList(dl, ll, lal []any, sc *schemaNode, cd, cl cursor) res {
	di, dcurs := visible(dl, cd)
	li, lcurs := visible(ll, cl)
	dv, lv := pick(dl, di), pick(ll, li)
	if len(dv) != len(lv) {
		r := res{p: dl, n: ll}
		if w.build {
			r.p, r.pc = pruneList(dl, cd)
			r.n, r.nc = pruneList(ll, cl)
		}
		return r
	}
	var elem *schemaNode
	if sc != nil {
		elem = sc.elem
	}
	eq := true
	pOwned, nOwned := di != nil, li != nil // pick made fresh copies
	for i := range dv {
		var lav any
		if i < len(lal) {
			lav = lal[i]
		}
		r := w.walk(dv[i], lv[i], lav, elem, cursorAt(dcurs, i), cursorAt(lcurs, i))
		if !r.eq {
			eq = false
			if w.stop() {
				return res{}
			}
		}
		if r.pc {
			if !pOwned {
				dv, pOwned = append([]any(nil), dv...), true
			}
			dv[i] = r.p
		}
		if r.nc {
			if !nOwned {
				lv, nOwned = append([]any(nil), lv...), true
			}
			lv[i] = r.n
		}
	}
	r := res{p: dl, n: ll, eq: eq}
	if pOwned {
		r.p, r.pc = dv, true
	}
	if nOwned {
		r.n, r.nc = lv, true
	}
	return r
}

// listKeys returns each element's merge key, or ok=false when an element
// lacks one or two share one (the list then compares atomically).
func listKeys(l []any, key string, idx []int) ([]string, bool) {
	n := len(l)
	if idx != nil {
		n = len(idx)
	}
	keys := make([]string, n)
	for j := range n {
		i := j
		if idx != nil {
			i = idx[j]
		}
		m, ok := l[i].(map[string]any)
		if !ok {
			return nil, false
		}
		k, ok := keyString(m[key])
		if !ok {
			return nil, false
		}
		keys[j] = k
	}
	if n <= 16 {
		for a := range keys {
			for b := a + 1; b < len(keys); b++ {
				if keys[a] == keys[b] {
					return nil, false
				}
			}
		}
		return keys, true
	}
	seen := make(map[string]struct{}, n)
	for _, k := range keys {
		if _, dup := seen[k]; dup {
			return nil, false
		}
		seen[k] = struct{}{}
	}
	return keys, true
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// walkKeyed merges a list whose elements are identified by a merge key,
// as strategic merge patch does for containers, ports, env and volumes.
// Order is not significant; elements only in live are defaults (kept)
// unless the last-applied configuration had them (removed).
func (w *walker) walkKeyed(dl, ll, lal []any, sc *schemaNode, cd, cl cursor) (res, bool) {
	di, dcurs := visible(dl, cd)
	li, lcurs := visible(ll, cl)
	dv, lv := pick(dl, di), pick(ll, li)
	dk, ok1 := listKeys(dv, sc.mergeKey, nil)
	lk, ok2 := listKeys(lv, sc.mergeKey, nil)
	if !ok1 || !ok2 {
		return res{}, false
	}
	var lak []string
	if w.threeWay && lal != nil {
		lak, _ = listKeys(lal, sc.mergeKey, nil)
	}
	eq := true
	var pl, nl []any
	if w.build {
		pl = make([]any, 0, len(lv)+len(dv))
		if li != nil {
			nl = lv
		}
	}
	matched := 0
	for i, lval := range lv {
		j := indexOf(dk, lk[i])
		if j < 0 {
			if w.pending && w.mayBeAppliedValue(lval.(map[string]any)[sc.mergeKey]) {
				w.abort = true
				return res{}, true
			}
			if w.threeWay && indexOf(lak, lk[i]) >= 0 {
				eq = false
				if !w.build {
					return res{}, true
				}
				if x, changed := prune(lval, cursorAt(lcurs, i)); changed {
					nl = setElem(nl, lv, i, x)
				}
				continue
			}
			if w.build {
				x, changed := prune(lval, cursorAt(lcurs, i))
				if changed {
					nl = setElem(nl, lv, i, x)
				}
				pl = append(pl, x)
			}
			continue
		}
		matched++
		var lav any
		if k := indexOf(lak, lk[i]); k >= 0 {
			lav = lal[k]
		}
		r := w.walk(dv[j], lval, lav, sc.elem, cursorAt(dcurs, j), cursorAt(lcurs, i))
		if !r.eq {
			eq = false
			if w.stop() {
				return res{}, true
			}
		}
		if w.build {
			pl = append(pl, r.p)
			if r.nc {
				nl = setElem(nl, lv, i, r.n)
			}
		}
	}
	if matched != len(dv) {
		eq = false
		if !w.build {
			return res{}, true
		}
		for j, k := range dk {
			if indexOf(lk, k) < 0 {
				x, _ := prune(dv[j], cursorAt(dcurs, j))
				pl = append(pl, x)
			}
		}
	}
	r := res{p: dl, n: ll, eq: eq}
	if w.build {
		r.p, r.pc = pl, true
		if nl != nil {
			r.n, r.nc = nl, true
		}
	}
	return r, true
}

func setElem(out, src []any, i int, v any) []any {
	if out == nil {
		out = append([]any(nil), src...)
	}
	out[i] = v
	return out
}

// prune drops the ignored parts of v, copying only along changed paths.
func prune(v any, c cursor) (any, bool) {
	if c.empty() {
		return v, false
	}
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, cv := range x {
			cc, all := c.field(k)
			if all {
				if out == nil {
					out = cloneMap(x, 0)
				}
				delete(out, k)
				continue
			}
			if nv, changed := prune(cv, cc); changed {
				if out == nil {
					out = cloneMap(x, 0)
				}
				out[k] = nv
			}
		}
		if out == nil {
			return v, false
		}
		return out, true
	case []any:
		return pruneList(x, c)
	}
	return v, false
}

func pruneList(l []any, c cursor) (any, bool) {
	if c.empty() {
		return l, false
	}
	var out []any
	changed := false
	for i, v := range l {
		cc, all := c.elem(i, v)
		if all {
			if !changed {
				out = append(make([]any, 0, len(l)), l[:i]...)
				changed = true
			}
			continue
		}
		nv, ch := prune(v, cc)
		if ch && !changed {
			out = append(make([]any, 0, len(l)), l[:i]...)
			changed = true
		}
		if changed {
			out = append(out, nv)
		}
	}
	if !changed {
		return l, false
	}
	return out, true
}
