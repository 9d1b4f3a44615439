package diff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// jqTimeout bounds each evaluation of one jq path expression on one
// object.
const jqTimeout = time.Second

// maxJQPaths bounds how many paths one expression may select, and
// maxJQPathElems the keys and indices of all of them together: the output
// an expression may make an evaluation hold.
const (
	maxJQPaths     = 100_000
	maxJQPathElems = 1_000_000
)

// ErrJQTimeout is wrapped by the error Diff returns when a jq path
// expression does not finish within one second.
var ErrJQTimeout = errors.New("jq path expression timed out")

// toJQ converts a decoded Kubernetes object into the value types gojq
// accepts (it rejects int64). Strings are shared, not copied.
func toJQ(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = toJQ(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = toJQ(c)
		}
		return out
	case string, bool, nil, float64:
		return x
	case int64:
		return int(x)
	case int:
		return x
	case int32:
		return int(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	}
	if f, ok := toFloat(v); ok && !math.IsNaN(f) {
		return f
	}
	return nil
}

// jqPaths evaluates the expressions against obj and returns the trie of
// the selected paths, or nil when none was selected. Runtime errors of an
// expression (such as iterating a field the object lacks) select nothing,
// as in Argo CD; a timeout is an error. Errors never quote the object.
func jqPaths(ctx context.Context, exprs []jqExpr, obj map[string]any) (*ignNode, error) {
	if len(exprs) == 0 || obj == nil {
		return nil, nil
	}
	input := toJQ(obj)
	var root *ignNode
	for _, e := range exprs {
		paths, err := runJQ(ctx, e, input)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if root == nil {
				root = &ignNode{}
			}
			root.addPath(p)
		}
	}
	return root, nil
}

func runJQ(parent context.Context, e jqExpr, input any) (paths [][]any, err error) {
	ctx, cancel := context.WithTimeout(parent, jqTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			paths, err = nil, fmt.Errorf("jq path expression %q: evaluation panicked", e.src)
		}
	}()
	iter := e.code.RunWithContext(ctx, input)
	elems := 0
	for {
		v, ok := iter.Next()
		if !ok {
			return paths, nil
		}
		if verr, isErr := v.(error); isErr {
			if perr := parent.Err(); perr != nil {
				return nil, fmt.Errorf("jq path expression %q: %w", e.src, perr)
			}
			if errors.Is(verr, context.DeadlineExceeded) || ctx.Err() != nil {
				return nil, fmt.Errorf("%w after %s: %q", ErrJQTimeout, jqTimeout, e.src)
			}
			return paths, nil
		}
		p, ok := v.([]any)
		if !ok {
			continue
		}
		if len(paths) >= maxJQPaths {
			return nil, fmt.Errorf("jq path expression %q selects more than %d paths", e.src, maxJQPaths)
		}
		if elems += len(p); elems > maxJQPathElems {
			return nil, fmt.Errorf("jq path expression %q selects paths of more than %d elements together", e.src, maxJQPathElems)
		}
		paths = append(paths, p)
	}
}
