package diff

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maskBase is the length of the mask given to the first distinct value of
// a Secret key; each further distinct value of that key gets one more '+'.
// Masks say which keys changed, never what they hold or how long it is.
const maskBase = 8

// foldStringData returns a Secret with stringData folded into data as the
// API server does (stringData wins), copying only the top map and data.
func foldStringData(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	raw, present := obj["stringData"]
	if !present {
		return obj
	}
	out := cloneMap(obj, 0)
	delete(out, "stringData")
	sd, _ := raw.(map[string]any)
	if len(sd) == 0 {
		return out
	}
	data, _ := obj["data"].(map[string]any)
	nd := make(map[string]any, len(data)+len(sd))
	for k, v := range data {
		nd[k] = v
	}
	for k, v := range sd {
		if s, ok := v.(string); ok {
			nd[k] = base64.StdEncoding.EncodeToString([]byte(s))
		}
	}
	out["data"] = nd
	return out
}

// masker gives every distinct value of a key its own run of '+'.
type masker map[string]map[string]string

func (m masker) mask(key string, v any) string {
	s, _ := v.(string)
	byVal := m[key]
	if byVal == nil {
		byVal = map[string]string{}
		m[key] = byVal
	}
	if out, ok := byVal[s]; ok {
		return out
	}
	out := strings.Repeat("+", maskBase+len(byVal))
	byVal[s] = out
	return out
}

// maskData returns obj with the values of its data and stringData maps
// replaced by masks; obj itself is not modified.
func (m masker) maskData(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out, copied := obj, false
	for _, field := range []string{"data", "stringData"} {
		data, ok := obj[field].(map[string]any)
		if !ok {
			continue
		}
		masked := make(map[string]any, len(data))
		for k, v := range data {
			masked[k] = m.mask(k, v)
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
		out := m.maskData(foldStringData(obj))
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
		if b, err := json.Marshal(m.maskData(foldStringData(la))); err == nil {
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
