package diff

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maskBase is the length of the mask given to the first distinct value of
// a Secret key; each further distinct value of that key gets one more '+'.
// Masks say which keys changed, never what they hold or how long it is.
const maskBase = 8

// normalizeSecret returns a Secret as the API server stores it:
// stringData folded into data (stringData wins), and a null value in
// either read as the empty value "" (the typed Secret decodes both to
// empty bytes, and stored empty bytes come back as null). It copies only
// the top map and data, and only when something changes.
func normalizeSecret(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	data, _ := obj["data"].(map[string]any)
	raw, folding := obj["stringData"]
	nulls := false
	for _, v := range data {
		if v == nil {
			nulls = true
			break
		}
	}
	if !folding && !nulls {
		return obj
	}
	out := cloneMap(obj, 0)
	delete(out, "stringData")
	sd, _ := raw.(map[string]any)
	if len(sd) == 0 && !nulls {
		return out
	}
	nd := make(map[string]any, len(data)+len(sd))
	for k, v := range data {
		if v == nil {
			v = ""
		}
		nd[k] = v
	}
	for k, v := range sd {
		switch s := v.(type) {
		case string:
			nd[k] = base64.StdEncoding.EncodeToString([]byte(s))
		case nil:
			nd[k] = ""
		}
	}
	out["data"] = nd
	return out
}

// masker gives every distinct value of a key its own run of '+'.
type masker map[string]map[any]string

func (m masker) mask(key string, v any) string {
	id := maskID(v)
	byVal := m[key]
	if byVal == nil {
		byVal = map[any]string{}
		m[key] = byVal
	}
	if out, ok := byVal[id]; ok {
		return out
	}
	out := strings.Repeat("+", maskBase+len(byVal))
	byVal[id] = out
	return out
}

// jsonID identifies a value that cannot be a map key by its JSON text; as
// a type of its own it never equals a string value.
type jsonID string

// maskID identifies a value by type as well as content, so that values
// the diff found different never share a mask (null and "", a number and
// the string of its digits), while numbers equal by value share one.
func maskID(v any) any {
	switch v.(type) {
	case string, bool, nil:
		return v
	}
	if f, ok := toFloat(v); ok {
		return f
	}
	b, err := json.Marshal(v)
	if err != nil {
		return jsonID(fmt.Sprintf("%T %v", v, v))
	}
	return jsonID(b)
}

// maskData returns obj with the values of its data and stringData maps
// replaced by masks; obj itself is not modified.
func (m masker) maskData(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out, copied := obj, false
	for _, field := range []string{"data", "stringData"} {
		raw, present := obj[field]
		if !present || raw == nil {
			continue
		}
		var masked any
		if data, ok := raw.(map[string]any); ok {
			mm := make(map[string]any, len(data))
			for k, v := range data {
				mm[k] = m.mask(k, v)
			}
			masked = mm
		} else {
			// not a map (the API server would refuse it), but it may
			// still hold a value: mask it whole
			masked = m.mask("\x00"+field, raw)
		}
		if !copied {
			out, copied = cloneMap(obj, 0), true
		}
		out[field] = masked
	}
	return out
}

func maskResult(r *Result) {
	m := masker{}
	if r.Desired != nil {
		r.Desired = &unstructured.Unstructured{Object: m.maskData(r.Desired.Object)}
	}
	if r.Live != nil {
		r.Live = &unstructured.Unstructured{Object: m.maskData(r.Live.Object)}
	}
}

// HideSecretData returns copies of a desired and a live Secret (either may
// be nil) whose data, stringData and last-applied annotation hold masks
// instead of values: equal values get equal masks, different values
// different ones, so a viewer still sees which keys differ. Objects of
// other kinds are returned unchanged.
func HideSecretData(desired, live *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	var dObj, lObj map[string]any
	if desired != nil {
		dObj = desired.Object
	}
	if live != nil {
		lObj = live.Object
	}
	ref := dObj
	if ref == nil {
		ref = lObj
	}
	if ref == nil || groupKind(ref).Group != "" || groupKind(ref).Kind != "Secret" {
		return desired, live
	}
	m := masker{}
	wrap := func(obj map[string]any) *unstructured.Unstructured {
		if obj == nil {
			return nil
		}
		out := m.maskData(normalizeSecret(obj))
		return &unstructured.Unstructured{Object: m.maskLastApplied(out)}
	}
	return wrap(dObj), wrap(lObj)
}

// maskLastApplied masks the Secret values inside the last-applied
// annotation. An annotation that cannot be read is replaced whole.
func (m masker) maskLastApplied(obj map[string]any) map[string]any {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, ok := ann[LastAppliedAnnotation].(string)
	if !ok {
		return obj
	}
	masked := strings.Repeat("+", maskBase)
	var la map[string]any
	if json.Unmarshal([]byte(s), &la) == nil && la != nil {
		if b, err := json.Marshal(m.maskData(normalizeSecret(la))); err == nil {
			masked = string(b)
		}
	}
	na := cloneMap(ann, 0)
	na[LastAppliedAnnotation] = masked
	nm := cloneMap(meta, 0)
	nm["annotations"] = na
	out := cloneMap(obj, 0)
	out["metadata"] = nm
	return out
}
