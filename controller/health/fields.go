package health

import (
	"math"
	"time"
)

// The built-in checks read objects as the API server serves them. They are
// tolerant on purpose: a field of the wrong type reads as absent, so a
// malformed object gets a verdict (usually Progressing or Unknown) instead of
// an error, and no check ever panics.

// field walks obj along path and returns the value found, or nil.
func field(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// mapField returns the map at path, or nil.
func mapField(obj map[string]any, path ...string) map[string]any {
	m, _ := field(obj, path...).(map[string]any)
	return m
}

// sliceField returns the list at path, or nil.
func sliceField(obj map[string]any, path ...string) []any {
	s, _ := field(obj, path...).([]any)
	return s
}

// stringField returns the string at path, or "".
func stringField(obj map[string]any, path ...string) string {
	s, _ := field(obj, path...).(string)
	return s
}

// boolField returns the bool at path, or false.
func boolField(obj map[string]any, path ...string) bool {
	b, _ := field(obj, path...).(bool)
	return b
}

// intField returns the integer at path and whether one was there. JSON
// decoding yields int64; float64 and int are accepted for objects built in
// code.
func intField(obj map[string]any, path ...string) (int64, bool) {
	return toInt(field(obj, path...))
}

// intOr returns the integer at path, or def when there is none.
func intOr(obj map[string]any, def int64, path ...string) int64 {
	if v, ok := intField(obj, path...); ok {
		return v
	}
	return def
}

func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || n > math.MaxInt64 || n < math.MinInt64 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

// timeField parses the RFC 3339 time at path.
func timeField(obj map[string]any, path ...string) (time.Time, bool) {
	s := stringField(obj, path...)
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// condition is the part of a Kubernetes status condition the checks read.
type condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

// findCondition returns the condition of type typ in the list at
// status.conditions.
func findCondition(obj map[string]any, typ string) (condition, bool) {
	for _, item := range sliceField(obj, "status", "conditions") {
		c, ok := item.(map[string]any)
		if !ok {
			continue
		}
		if t, _ := c["type"].(string); t == typ {
			return toCondition(c), true
		}
	}
	return condition{}, false
}

func toCondition(c map[string]any) condition {
	var out condition
	out.Type, _ = c["type"].(string)
	out.Status, _ = c["status"].(string)
	out.Reason, _ = c["reason"].(string)
	out.Message, _ = c["message"].(string)
	return out
}

// generationObserved reports whether the controller has seen the latest
// spec: metadata.generation <= status.observedGeneration.
func generationObserved(obj map[string]any) bool {
	gen := intOr(obj, 0, "metadata", "generation")
	observed := intOr(obj, 0, "status", "observedGeneration")
	return gen <= observed
}
