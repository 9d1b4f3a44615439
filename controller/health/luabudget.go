package health

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strconv"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// A Lua check runs in the controller's process, so its memory is bounded
// from inside. Every string a script can build (`..`, string.rep,
// string.gsub, string.format, table.concat) is at most maxLuaString, and
// the bytes of all the strings one run builds are counted against the
// engine's memory budget, exactly and for that run alone. What the count
// cannot see — tables grown without end — is stopped by the deadline, and
// by a watchdog when the process heap grows by heapBackstop times the
// budget while the run lasts: the heap is the whole process's, so the
// backstop sits far above the budget, where other work is not what grew
// it.

// DefaultMemoryBudget bounds the bytes of the strings one run of a Lua
// check builds, when Options.MemoryBudget is zero: 64 MiB.
const DefaultMemoryBudget int64 = 64 << 20

// heapBackstop times the memory budget is how much the process heap may
// grow while one check runs before the watchdog stops the check.
const heapBackstop = 16

// ErrScriptMemory is wrapped by Check's error when a Lua check was stopped
// because it built more strings than the engine's memory budget, or the
// heap grew past the backstop while it ran.
var ErrScriptMemory = errors.New("health script exceeded its memory budget")

// Watchdog timing: a check that ends within watchStart (nearly all do)
// never reads the heap; a longer one has it read every watchInterval.
const (
	watchStart    = 2 * time.Millisecond
	watchInterval = time.Millisecond
)

// runMemory is what one run of a check has built, against its budget.
type runMemory struct {
	used, budget int64
	// stop ends the run with ErrScriptMemory as the cause.
	stop context.CancelCauseFunc
}

type runMemoryKey struct{}

// withRunMemory returns ctx carrying the account of one run.
func withRunMemory(ctx context.Context, m *runMemory) context.Context {
	return context.WithValue(ctx, runMemoryKey{}, m)
}

// charge counts n bytes a library function is about to build for the run
// of L, and stops the run when they pass its budget.
func charge(L *lua.LState, n int) {
	ctx := L.Context()
	if ctx == nil {
		return
	}
	m, _ := ctx.Value(runMemoryKey{}).(*runMemory)
	if m == nil {
		return
	}
	m.used += int64(n)
	if m.used > m.budget {
		m.stop(ErrScriptMemory)
		L.RaiseError("%s", ErrScriptMemory.Error())
	}
}

// heapMetric is the bytes of heap objects, live or not yet swept, kept
// current by every allocation.
const heapMetric = "/memory/classes/heap/objects:bytes"

func heapBytes() int64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(min(s[0].Value.Uint64(), 1<<62)) //nolint:gosec // G115: capped above
}

// watchMemory stops a run (cancel with ErrScriptMemory as the cause) when
// the heap grows by more than heapBackstop times budget after its first
// watchStart. The returned func ends the watch.
func watchMemory(budget int64, cancel context.CancelCauseFunc) func() {
	done := make(chan struct{})
	timer := time.AfterFunc(watchStart, func() {
		base := heapBytes()
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if heapBytes()-base > heapBackstop*budget {
				cancel(ErrScriptMemory)
				return
			}
		}
	})
	return func() {
		timer.Stop()
		close(done)
	}
}

// concatName names the local that holds the bounded concatenation in
// every compiled check. No Lua identifier can spell it, so a script can
// neither read nor replace it.
const concatName = "graphcd concat"

// boundConcat rewrites every `a .. b` of chunk into a call of the bounded
// concatenation, which the chunk receives as its first argument.
func boundConcat(chunk []ast.Stmt) []ast.Stmt {
	rewriteStmts(chunk)
	decl := &ast.LocalAssignStmt{Names: []string{concatName}, Exprs: []ast.Expr{&ast.Comma3Expr{}}}
	return append([]ast.Stmt{decl}, chunk...)
}

func rewriteStmts(stmts []ast.Stmt) {
	for _, s := range stmts {
		rewriteStmt(s)
	}
}

func rewriteStmt(s ast.Stmt) {
	switch s := s.(type) {
	case *ast.AssignStmt:
		rewriteExprs(s.Lhs)
		rewriteExprs(s.Rhs)
	case *ast.LocalAssignStmt:
		rewriteExprs(s.Exprs)
	case *ast.FuncCallStmt:
		s.Expr = rewriteExpr(s.Expr)
	case *ast.DoBlockStmt:
		rewriteStmts(s.Stmts)
	case *ast.WhileStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.RepeatStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Stmts)
	case *ast.IfStmt:
		s.Condition = rewriteExpr(s.Condition)
		rewriteStmts(s.Then)
		rewriteStmts(s.Else)
	case *ast.NumberForStmt:
		s.Init, s.Limit, s.Step = rewriteExpr(s.Init), rewriteExpr(s.Limit), rewriteExpr(s.Step)
		rewriteStmts(s.Stmts)
	case *ast.GenericForStmt:
		rewriteExprs(s.Exprs)
		rewriteStmts(s.Stmts)
	case *ast.FuncDefStmt:
		if s.Name != nil {
			s.Name.Func, s.Name.Receiver = rewriteExpr(s.Name.Func), rewriteExpr(s.Name.Receiver)
		}
		rewriteStmts(s.Func.Stmts)
	case *ast.ReturnStmt:
		rewriteExprs(s.Exprs)
	}
}

func rewriteExprs(exprs []ast.Expr) {
	for i, e := range exprs {
		exprs[i] = rewriteExpr(e)
	}
}

func rewriteExpr(e ast.Expr) ast.Expr {
	switch e := e.(type) {
	case *ast.StringConcatOpExpr:
		call := &ast.FuncCallExpr{Func: &ast.IdentExpr{Value: concatName}, Args: []ast.Expr{rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)}}
		call.SetLine(e.Line())
		call.SetLastLine(e.LastLine())
		call.Func.SetLine(e.Line())
		call.Func.SetLastLine(e.LastLine())
		return call
	case *ast.AttrGetExpr:
		e.Object, e.Key = rewriteExpr(e.Object), rewriteExpr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			f.Key, f.Value = rewriteExpr(f.Key), rewriteExpr(f.Value)
		}
	case *ast.FuncCallExpr:
		e.Func, e.Receiver = rewriteExpr(e.Func), rewriteExpr(e.Receiver)
		rewriteExprs(e.Args)
	case *ast.LogicalOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.RelationalOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		e.Lhs, e.Rhs = rewriteExpr(e.Lhs), rewriteExpr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryNotOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.UnaryLenOpExpr:
		e.Expr = rewriteExpr(e.Expr)
	case *ast.FunctionExpr:
		rewriteStmts(e.Stmts)
	}
	return e
}

// luaConcat is `a .. b` with a bound on the result; operands that are not
// strings or numbers go to their __concat metamethod, as in Lua.
func luaConcat(L *lua.LState) int {
	a, b := L.Get(1), L.Get(2)
	if lua.LVCanConvToString(a) && lua.LVCanConvToString(b) {
		as, bs := lua.LVAsString(a), lua.LVAsString(b)
		if len(as)+len(bs) > maxLuaString {
			L.RaiseError("string concatenation: result would exceed %d bytes", maxLuaString)
		}
		charge(L, len(as)+len(bs))
		L.Push(lua.LString(as + bs))
		return 1
	}
	mm := L.GetMetaField(a, "__concat")
	if mm == lua.LNil {
		mm = L.GetMetaField(b, "__concat")
	}
	if fn, ok := mm.(*lua.LFunction); ok {
		L.Push(fn)
		L.Push(a)
		L.Push(b)
		L.Call(2, 1)
		return 1
	}
	L.RaiseError("cannot perform concat operation between %s and %s", a.Type(), b.Type())
	return 0
}

// strFormat is string.format refusing, before formatting, a result that
// could pass maxLuaString: the format, the string forms of the arguments
// and every field width and precision (each at most a million in Go's
// fmt) are added up.
func strFormat(format lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		f := L.CheckString(1)
		size := len(f)
		for i := 2; i <= L.GetTop(); i++ {
			if v := L.Get(i); lua.LVCanConvToString(v) {
				size += len(lua.LVAsString(v))
			} else {
				size += 64 // tables, booleans and nil print short
			}
		}
		size += formatWidths(f)
		if size > maxLuaString {
			L.RaiseError("string.format: result would exceed %d bytes", maxLuaString)
		}
		charge(L, size)
		return format(L)
	}
}

// formatWidths adds up the widths and precisions written in f's verbs.
func formatWidths(f string) int {
	total := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && f[j] != '%' && !isVerb(f[j]) {
			start := j
			for j < len(f) && f[j] >= '0' && f[j] <= '9' {
				j++
			}
			if j > start {
				n, err := strconv.Atoi(f[start:j])
				if err != nil || n > 1_000_000 {
					n = 1_000_000
				}
				total += n
				continue
			}
			j++
		}
		i = j
	}
	return total
}

func isVerb(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// memoryError explains a run stopped for its memory.
func memoryError(budget int64) error {
	return fmt.Errorf("%w of %d MiB", ErrScriptMemory, budget>>20)
}
