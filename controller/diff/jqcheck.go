package diff

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/itchyny/gojq"
)

// jq path expressions come from Application specs, that is from tenants,
// and gojq checks its context only between two steps of its machine: one
// step (a builtin such as splits on a huge string, or "x" * 1e9) can run
// for minutes or fill the memory before the deadline is seen. So an
// expression may use only the constructs whose every step is cheap: the
// path forms, comparisons, boolean logic, select and a few string tests.
// Loops, function definitions, array construction and builtins that build
// large values are refused when the expression is compiled; arithmetic is
// limited to numbers and regular expressions to small literals, checked
// by graphcd's own functions.
const (
	// maxJQExpressionBytes bounds the source of one expression.
	maxJQExpressionBytes = 2048
	// maxJQRegexpBytes bounds the literal pattern of test().
	maxJQRegexpBytes = 256
	// maxJQRegexpInsts bounds the compiled program of a test() pattern,
	// which bounds the work of one match per input byte.
	maxJQRegexpInsts = 300
	// maxJQTestSubjectBytes bounds the string test() matches.
	maxJQTestSubjectBytes = 64 << 10
)

// Names of the functions that replace operators and builtins in a checked
// expression. A user's expression cannot call them: they are not in
// jqAllowed.
const (
	jqArithFunc = "_graphcd_arith"
	jqTestFunc  = "_graphcd_test"
)

// ErrJQRefused is wrapped by the error New returns for a jq path
// expression that uses a construct graphcd does not evaluate.
var ErrJQRefused = errors.New("not allowed in a jq path expression")

type jqFuncKey struct {
	name  string
	arity int
}

// jqAllowed lists the builtins an expression may call: each step of each
// one costs at most linear time in the value it is given and allocates
// little.
var jqAllowed = func() map[jqFuncKey]bool {
	m := map[jqFuncKey]bool{}
	for name, arities := range map[string][]int{
		"empty": {0}, "not": {0}, "length": {0}, "utf8bytelength": {0}, "type": {0},
		"recurse": {0}, "first": {0, 1}, "last": {0, 1}, "error": {0, 1},
		"objects": {0}, "arrays": {0}, "strings": {0}, "numbers": {0}, "booleans": {0},
		"nulls": {0}, "iterables": {0}, "scalars": {0}, "values": {0},
		"select": {1}, "has": {1}, "in": {1}, "startswith": {1}, "endswith": {1},
		"ltrimstr": {1}, "rtrimstr": {1}, "isempty": {1}, "limit": {2}, "getpath": {1},
		"any": {0, 1, 2}, "all": {0, 1, 2}, "IN": {1, 2},
		"test": {1, 2}, "contains": {1},
	} {
		for _, n := range arities {
			m[jqFuncKey{name, n}] = true
		}
	}
	return m
}()

// jqArithOps maps each arithmetic operator to the gojq program that
// computes it once graphcd has checked that both operands are numbers.
var jqArithOps = func() map[string]*gojq.Code {
	m := map[string]*gojq.Code{}
	for _, op := range []string{"+", "-", "*", "/", "%"} {
		q, err := gojq.Parse("$l " + op + " $r")
		if err != nil {
			panic(err)
		}
		code, err := gojq.Compile(q, gojq.WithVariables([]string{"$l", "$r"}))
		if err != nil {
			panic(err)
		}
		m[op] = code
	}
	return m
}()

var jqOpNames = map[gojq.Operator]string{
	gojq.OpAdd: "+", gojq.OpSub: "-", gojq.OpMul: "*", gojq.OpDiv: "/", gojq.OpMod: "%",
}

// compileJQ checks src, rewrites it to graphcd's bounded functions and
// compiles it as path(src).
func compileJQ(src string) (*gojq.Code, error) {
	if len(src) > maxJQExpressionBytes {
		return nil, refuse("an expression longer than %d bytes is", maxJQExpressionBytes)
	}
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, err
	}
	c := &jqChecker{regexps: map[[2]string]*regexp.Regexp{}}
	if err := c.query(q); err != nil {
		return nil, err
	}
	wrapped := &gojq.Query{Term: &gojq.Term{
		Type: gojq.TermTypeFunc,
		Func: &gojq.Func{Name: "path", Args: []*gojq.Query{q}},
	}}
	return gojq.Compile(wrapped,
		gojq.WithFunction(jqArithFunc, 3, 3, jqArith),
		gojq.WithFunction(jqTestFunc, 2, 2, c.test))
}

// jqChecker walks a parsed expression, refuses what is not allowed and
// rewrites operators and test() in place.
type jqChecker struct {
	// regexps holds the compiled test() patterns by (pattern, flags);
	// written only while checking, read-only once compiled.
	regexps map[[2]string]*regexp.Regexp
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%s %w", fmt.Sprintf(format, args...), ErrJQRefused)
}

func (c *jqChecker) query(q *gojq.Query) error {
	if q == nil {
		return nil
	}
	if q.Meta != nil || len(q.Imports) > 0 {
		return refuse("modules are")
	}
	if len(q.FuncDefs) > 0 {
		return refuse("function definitions (def) are")
	}
	for _, p := range q.Patterns {
		if err := c.pattern(p); err != nil {
			return err
		}
	}
	if err := c.query(q.Left); err != nil {
		return err
	}
	if err := c.query(q.Right); err != nil {
		return err
	}
	switch q.Op {
	case 0, gojq.OpPipe, gojq.OpComma, gojq.OpAlt, gojq.OpAnd, gojq.OpOr,
		gojq.OpEq, gojq.OpNe, gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe:
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod:
		// a + b becomes _graphcd_arith("+"; a; b), which refuses
		// anything but numbers (no string repetition or concatenation).
		left, right := q.Left, q.Right
		if _, ok := literalString(left); ok {
			return refuse("the operator %s on a string is", q.Op)
		}
		if _, ok := literalString(right); ok {
			return refuse("the operator %s on a string is", q.Op)
		}
		*q = gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeFunc, Func: &gojq.Func{
			Name: jqArithFunc,
			Args: []*gojq.Query{stringQuery(jqOpNames[q.Op]), left, right},
		}}}
		return nil
	default:
		return refuse("the operator %s is", q.Op)
	}
	return c.term(q.Term)
}

func stringQuery(s string) *gojq.Query {
	return &gojq.Query{Term: &gojq.Term{Type: gojq.TermTypeString, Str: &gojq.String{Str: s}}}
}

func (c *jqChecker) pattern(p *gojq.Pattern) error {
	for _, e := range p.Array {
		if err := c.pattern(e); err != nil {
			return err
		}
	}
	for _, kv := range p.Object {
		if err := c.str(kv.KeyString); err != nil {
			return err
		}
		if err := c.query(kv.KeyQuery); err != nil {
			return err
		}
		if kv.Val != nil {
			if err := c.pattern(kv.Val); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *jqChecker) str(s *gojq.String) error {
	if s != nil && len(s.Queries) > 0 {
		return refuse("string interpolation is")
	}
	return nil
}

func (c *jqChecker) term(t *gojq.Term) error {
	if t == nil {
		return nil
	}
	for _, s := range t.SuffixList {
		if err := c.index(s.Index); err != nil {
			return err
		}
	}
	switch t.Type {
	case gojq.TermTypeIdentity, gojq.TermTypeRecurse, gojq.TermTypeNull,
		gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return nil
	case gojq.TermTypeIndex:
		return c.index(t.Index)
	case gojq.TermTypeString:
		return c.str(t.Str)
	case gojq.TermTypeFunc:
		return c.fn(t.Func)
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			if err := c.str(kv.KeyString); err != nil {
				return err
			}
			if err := c.query(kv.KeyQuery); err != nil {
				return err
			}
			if err := c.query(kv.Val); err != nil {
				return err
			}
		}
		return nil
	case gojq.TermTypeArray:
		if t.Array.Query == nil || isLiteralList(t.Array.Query) {
			return nil
		}
		return refuse("array construction other than a list of literals is")
	case gojq.TermTypeUnary:
		return c.term(t.Unary.Term)
	case gojq.TermTypeIf:
		if err := c.query(t.If.Cond); err != nil {
			return err
		}
		if err := c.query(t.If.Then); err != nil {
			return err
		}
		for _, e := range t.If.Elif {
			if err := c.query(e.Cond); err != nil {
				return err
			}
			if err := c.query(e.Then); err != nil {
				return err
			}
		}
		return c.query(t.If.Else)
	case gojq.TermTypeTry:
		if err := c.query(t.Try.Body); err != nil {
			return err
		}
		return c.query(t.Try.Catch)
	case gojq.TermTypeQuery:
		return c.query(t.Query)
	case gojq.TermTypeFormat:
		return refuse("formats (@%s) are", strings.TrimPrefix(t.Format, "@"))
	case gojq.TermTypeReduce:
		return refuse("reduce is")
	case gojq.TermTypeForeach:
		return refuse("foreach is")
	case gojq.TermTypeLabel, gojq.TermTypeBreak:
		return refuse("label and break are")
	}
	return refuse("this construct is")
}

// isLiteralList reports whether q is a comma-separated list of scalar
// literals, as in ["a", "b"].
func isLiteralList(q *gojq.Query) bool {
	if q.Op == gojq.OpComma {
		return isLiteralList(q.Left) && isLiteralList(q.Right)
	}
	return q.Op == 0 && q.Left == nil && len(q.FuncDefs) == 0 && len(q.Patterns) == 0 && isLiteral(q.Term)
}

func isLiteral(t *gojq.Term) bool {
	if t == nil || len(t.SuffixList) > 0 {
		return false
	}
	switch t.Type {
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
		return true
	case gojq.TermTypeString:
		return t.Str != nil && len(t.Str.Queries) == 0
	}
	return false
}

func (c *jqChecker) index(x *gojq.Index) error {
	if x == nil {
		return nil
	}
	if err := c.str(x.Str); err != nil {
		return err
	}
	if err := c.query(x.Start); err != nil {
		return err
	}
	return c.query(x.End)
}

func (c *jqChecker) fn(f *gojq.Func) error {
	if strings.HasPrefix(f.Name, "$") {
		if f.Name == "$ENV" || f.Name == "$__loc__" || f.Name == "$__prog_args" {
			return refuse("%s is", f.Name)
		}
		return nil // a variable bound by "as"
	}
	if !jqAllowed[jqFuncKey{f.Name, len(f.Args)}] {
		return refuse("the function %s/%d is", f.Name, len(f.Args))
	}
	for _, a := range f.Args {
		if err := c.query(a); err != nil {
			return err
		}
	}
	switch f.Name {
	case "contains":
		if _, ok := literalString(f.Args[0]); !ok {
			return refuse("contains with an argument other than a string literal is")
		}
	case "test":
		return c.rewriteTest(f)
	}
	return nil
}

func literalString(q *gojq.Query) (string, bool) {
	if q == nil || q.Op != 0 || q.Left != nil || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return "", false
	}
	t := q.Term
	if t == nil || t.Type != gojq.TermTypeString || len(t.SuffixList) > 0 || t.Str == nil || len(t.Str.Queries) > 0 {
		return "", false
	}
	return t.Str.Str, true
}

// rewriteTest checks test(re) and test(re; flags): both must be string
// literals and the pattern small; it compiles the pattern once and turns
// the call into _graphcd_test(re; flags).
func (c *jqChecker) rewriteTest(f *gojq.Func) error {
	pattern, ok := literalString(f.Args[0])
	if !ok {
		return refuse("test with a pattern other than a string literal is")
	}
	flags := ""
	if len(f.Args) == 2 {
		if flags, ok = literalString(f.Args[1]); !ok {
			return refuse("test with flags other than a string literal is")
		}
	}
	if len(pattern) > maxJQRegexpBytes {
		return refuse("a test pattern longer than %d bytes is", maxJQRegexpBytes)
	}
	prefix := ""
	for _, r := range flags {
		switch r {
		case 'g':
		case 'i':
			prefix += "(?i)"
		case 'm':
			prefix += "(?s)" // jq's "multi-line" lets . match newlines
		default:
			return fmt.Errorf("test: unsupported regular expression flag %q", r)
		}
	}
	parsed, err := syntax.Parse(prefix+pattern, syntax.Perl)
	if err != nil {
		return fmt.Errorf("test: invalid regular expression %q: %w", pattern, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil {
		return fmt.Errorf("test: invalid regular expression %q: %w", pattern, err)
	}
	if len(prog.Inst) > maxJQRegexpInsts {
		return refuse("a test pattern compiling to more than %d instructions is", maxJQRegexpInsts)
	}
	re, err := regexp.Compile(prefix + pattern)
	if err != nil {
		return fmt.Errorf("test: invalid regular expression %q: %w", pattern, err)
	}
	c.regexps[[2]string{pattern, flags}] = re
	f.Name = jqTestFunc
	f.Args = []*gojq.Query{stringQuery(pattern), stringQuery(flags)}
	return nil
}

// test is _graphcd_test(re; flags): jq's test with a pattern compiled
// when the expression was, on strings of at most 64 KiB.
func (c *jqChecker) test(v any, args []any) any {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("test: %s cannot be matched, as it is not a string", jqTypeName(v))
	}
	if len(s) > maxJQTestSubjectBytes {
		return fmt.Errorf("test: a string of %d bytes is longer than %d", len(s), maxJQTestSubjectBytes)
	}
	pattern, _ := args[0].(string)
	flags, _ := args[1].(string)
	re := c.regexps[[2]string{pattern, flags}]
	if re == nil {
		return errors.New("test: pattern was not compiled")
	}
	return re.MatchString(s)
}

// jqArith is _graphcd_arith(op; l; r): jq arithmetic on numbers (and
// null) only, so no operator can repeat or join strings, arrays or
// objects; big integers are computed as floats so that repeated
// multiplication cannot grow a number without bound.
func jqArith(_ any, args []any) any {
	op, _ := args[0].(string)
	l, r := args[1], args[2]
	for _, x := range []*any{&l, &r} {
		switch v := (*x).(type) {
		case nil, int, float64:
		case *big.Int:
			f, _ := new(big.Float).SetInt(v).Float64()
			*x = f
		default:
			return fmt.Errorf("operator %s on %s: %w", op, jqTypeName(v), errJQArith)
		}
	}
	code := jqArithOps[op]
	if code == nil {
		return fmt.Errorf("operator %q: %w", op, errJQArith)
	}
	out, _ := code.RunWithContext(context.Background(), nil, l, r).Next()
	if b, ok := out.(*big.Int); ok {
		f, _ := new(big.Float).SetInt(b).Float64()
		return f
	}
	return out
}

var errJQArith = errors.New("arithmetic in a jq path expression is allowed on numbers only")

func jqTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, float64, *big.Int:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
