package diff

import (
	"encoding/json"
	"math"
	"strconv"
)

// toFloat reports the numeric value of the number types that decoders of
// Kubernetes objects produce (int64 from the unstructured decoder, float64
// from encoding/json, int from hand-built maps, json.Number).
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// scalarEqual compares two JSON values; numbers of different Go types
// compare by value. Maps and lists are compared deeply.
func scalarEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case int64:
		if y, ok := b.(int64); ok {
			return x == y
		}
	case map[string]any, []any:
		return deepEqual(a, b)
	}
	fa, ok1 := toFloat(a)
	fb, ok2 := toFloat(b)
	if !ok1 || !ok2 {
		return false
	}
	if ia, ok := a.(int64); ok {
		if ib, ok := b.(int64); ok {
			return ia == ib
		}
	}
	return fa == fb || (math.IsNaN(fa) && math.IsNaN(fb))
}

// deepEqual compares JSON values structurally.
func deepEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !deepEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !deepEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return scalarEqual(a, b)
}

// keyString renders a list merge key as a map key; numbers of any Go
// type render alike.
func keyString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		// an int-or-string key spelled "80" names the same element as 80
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return "n" + strconv.FormatInt(n, 10), true
		}
		return "s" + x, true
	case bool:
		return "b" + strconv.FormatBool(x), true
	}
	if f, ok := toFloat(v); ok {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}
