package health

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// LuaCheck is a custom health check in Argo CD's form: the settings key
// resource.customizations.health.<group>_<kind> holds Script, and
// resource.customizations.useOpenLibs.<group>_<kind> sets UseOpenLibs.
type LuaCheck struct {
	// Group is the API group ("" for the core group); Kind the kind. Either
	// may be "*" or contain "*" wildcards, which match any run of
	// characters.
	Group, Kind string
	// Script is Lua 5.1. It reads the global obj and returns a table
	// {status = "...", message = "..."}.
	Script string
	// UseOpenLibs adds the string, math and coroutine libraries to the
	// restricted set. File, process and environment access is never
	// available; see the package documentation.
	UseOpenLibs bool
}

// ErrScriptTimeout is wrapped by Check's error when a Lua check ran past the
// engine's timeout.
var ErrScriptTimeout = errors.New("health script timed out")

// compiledCheck is a LuaCheck parsed and compiled once; each run makes a
// fresh closure from proto.
type compiledCheck struct {
	key         string // "group/kind" pattern, for messages
	proto       *lua.FunctionProto
	useOpenLibs bool
	order       int // position in Options.LuaChecks
	literal     int // characters that are not wildcards, for precedence
	group, kind string
}

// luaChecks finds the Lua check for a group/kind.
type luaChecks struct {
	exact    map[groupKind]*compiledCheck
	wildcard []*compiledCheck // most specific first
	resolved sync.Map         // groupKind -> *compiledCheck (nil: none), wildcard lookups
}

func compileLuaChecks(checks []LuaCheck) (*luaChecks, error) {
	out := &luaChecks{exact: make(map[groupKind]*compiledCheck)}
	seen := make(map[groupKind]bool, len(checks))
	for i, c := range checks {
		gk := groupKind{group: c.Group, kind: c.Kind}
		if c.Kind == "" {
			return nil, fmt.Errorf("lua health check #%d (group %q): kind is empty", i, c.Group)
		}
		if seen[gk] {
			return nil, fmt.Errorf("lua health check %s: defined twice", gk)
		}
		seen[gk] = true
		name := "health(" + gk.String() + ")"
		chunk, err := parse.Parse(strings.NewReader(c.Script), name)
		if err != nil {
			return nil, fmt.Errorf("lua health check %s: %w", gk, err)
		}
		proto, err := lua.Compile(boundConcat(chunk), name)
		if err != nil {
			return nil, fmt.Errorf("lua health check %s: %w", gk, err)
		}
		cc := &compiledCheck{
			key:         gk.String(),
			proto:       proto,
			useOpenLibs: c.UseOpenLibs,
			order:       i,
			group:       c.Group,
			kind:        c.Kind,
			literal:     len(strings.ReplaceAll(c.Group+c.Kind, "*", "")),
		}
		if strings.Contains(c.Group, "*") || strings.Contains(c.Kind, "*") {
			out.wildcard = append(out.wildcard, cc)
		} else {
			out.exact[gk] = cc
		}
	}
	slices.SortStableFunc(out.wildcard, func(a, b *compiledCheck) int {
		if c := cmp.Compare(b.literal, a.literal); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	return out, nil
}

// find returns the check for gk: the exact one, else the most specific
// matching wildcard one (most non-wildcard characters, then first listed).
func (c *luaChecks) find(gk groupKind) *compiledCheck {
	if c == nil {
		return nil
	}
	if cc, ok := c.exact[gk]; ok {
		return cc
	}
	if len(c.wildcard) == 0 {
		return nil
	}
	if v, ok := c.resolved.Load(gk); ok {
		return v.(*compiledCheck)
	}
	var found *compiledCheck
	for _, cc := range c.wildcard {
		if wildcardMatch(cc.group, gk.group) && wildcardMatch(cc.kind, gk.kind) {
			found = cc
			break
		}
	}
	c.resolved.Store(gk, found)
	return found
}

// wildcardMatch reports whether s matches pattern, where "*" matches any run
// of characters (including none) and every other character itself.
func wildcardMatch(pattern, s string) bool {
	star, resume := -1, 0
	p, i := 0, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, resume = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			resume++
			i = resume
			p = star + 1
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// runLua runs check against obj on a pooled Lua state.
func (e *Engine) runLua(ctx context.Context, check *compiledCheck, obj *unstructured.Unstructured) (*Result, error) {
	var res Result
	err := e.execute(ctx, check.proto, check.useOpenLibs,
		func(L *lua.LState, env *lua.LTable) { env.RawSetString("obj", objectToLua(L, obj.Object)) },
		func(_ *lua.LState, ret lua.LValue) error { res = resultFromLua(ret); return nil })
	if se, ok := errors.AsType[*ScriptError](err); ok {
		return &Result{Status: StatusUnknown, Message: "the health script failed: " + se.Message}, nil
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// execute runs proto on a pooled Lua state under the engine's time and
// memory limits. bind sets the run's globals; use reads the value the
// chunk returned before the run's state is cleared. A Lua error (or an
// error use returns) comes back as a *ScriptError; a run cut off by its
// limits wraps ErrScriptTimeout or ErrScriptMemory.
func (e *Engine) execute(ctx context.Context, proto *lua.FunctionProto, open bool, bind func(*lua.LState, *lua.LTable), use func(*lua.LState, lua.LValue) error) error {
	vm, _ := e.pool.Get().(*luaVM)
	if vm == nil {
		vm = newLuaVM()
	}
	mem := &runMemory{budget: e.memoryBudget}
	memCtx, stopMem := context.WithCancelCause(withRunMemory(ctx, mem))
	mem.stop = stopMem
	defer stopMem(nil)
	runCtx, cancel := context.WithTimeout(memCtx, e.timeout)
	defer cancel()
	endWatch := watchMemory(e.memoryBudget, stopMem)
	reusable, err := vm.exec(runCtx, proto, open, bind, use)
	endWatch()
	switch {
	case ctx.Err() != nil:
		vm.close()
		return fmt.Errorf("lua: %w", ctx.Err())
	case errors.Is(context.Cause(memCtx), ErrScriptMemory):
		vm.close()
		return memoryError(e.memoryBudget)
	case runCtx.Err() != nil:
		vm.close()
		return fmt.Errorf("%w after %s: %w", ErrScriptTimeout, e.timeout, runCtx.Err())
	case err != nil:
		if reusable {
			e.pool.Put(vm)
		} else {
			vm.close()
		}
		return &ScriptError{Message: err.Error()}
	}
	e.pool.Put(vm)
	return nil
}

// luaVM is one Lua state with the library functions captured once. Every
// run gets a fresh, empty global table whose missing names resolve through
// a protected metatable: base functions come from the shared snapshot (Lua
// cannot change a Go function), and each library table is built fresh the
// first time the run touches it. So nothing a script stores or replaces
// survives into the next run, and a script pays only for what it uses.
type luaVM struct {
	L        *lua.LState
	globals  map[string]lua.LValue // base functions, require, print, _VERSION
	libs     [numLibs][]libEntry   // library contents, by lib index
	envMeta  *lua.LTable           // metatable of every run's globals
	strIndex *lua.LFunction        // __index of the string metatable
	blank    *lua.LTable           // globals between runs; never seen by a script
	concat   *lua.LFunction        // the bounded `..`, each chunk's first argument

	// The current run.
	env     *lua.LTable
	open    bool
	cur     [numLibs]*lua.LTable
	started time.Time // for os.clock
}

// libEntry is one name of a library table.
type libEntry struct {
	name  string
	value lua.LValue
}

// Lua state limits: deep recursion and huge argument lists fail with a Lua
// error instead of growing without bound.
const (
	luaCallStackSize   = 200
	luaRegistrySize    = 1024
	luaRegistryMaxSize = 256 * 1024
)

func newLuaVM() *luaVM {
	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    luaCallStackSize,
		RegistrySize:     luaRegistrySize,
		RegistryMaxSize:  luaRegistryMaxSize,
		RegistryGrowStep: luaRegistrySize,
	})
	vm := &luaVM{L: L}
	vm.captureLibraries()
	return vm
}

func (vm *luaVM) close() {
	vm.L.Close()
}

// run executes one check.
func (vm *luaVM) run(ctx context.Context, check *compiledCheck, obj *unstructured.Unstructured) (res *Result, reusable bool, err error) {
	reusable, err = vm.exec(ctx, check.proto, check.useOpenLibs,
		func(L *lua.LState, env *lua.LTable) { env.RawSetString("obj", objectToLua(L, obj.Object)) },
		func(_ *lua.LState, ret lua.LValue) error { r := resultFromLua(ret); res = &r; return nil })
	return res, reusable, err
}

// exec runs proto once in a fresh environment. A non-nil error is a Lua
// error or use's (the caller tells timeouts apart by its context);
// reusable says whether the state is still sound: an ordinary Lua error
// unwinds cleanly, a Go panic may not have.
func (vm *luaVM) exec(ctx context.Context, proto *lua.FunctionProto, open bool, bind func(*lua.LState, *lua.LTable), use func(*lua.LState, lua.LValue) error) (reusable bool, err error) {
	L := vm.L
	defer func() {
		// gopher-lua turns panics inside Lua calls into errors, but a
		// panic in our own glue must not take the controller down.
		if r := recover(); r != nil {
			reusable, err = false, fmt.Errorf("lua: panic: %v", r)
		}
	}()
	L.SetContext(ctx)
	defer L.RemoveContext()
	vm.started = time.Now()

	env := vm.newEnv(open)
	bind(L, env)
	defer vm.clearEnv()

	fn := L.NewFunctionFromProto(proto)
	L.Push(fn)
	L.Push(vm.concat)
	if err := L.PCall(1, 1, nil); err != nil {
		var apiErr *lua.ApiError
		if errors.As(err, &apiErr) && apiErr.Object != nil {
			return apiErr.Type == lua.ApiErrorRun, errors.New(apiErr.Object.String())
		}
		return false, err
	}
	ret := L.Get(-1)
	L.Pop(1)
	if err := use(L, ret); err != nil {
		return true, err
	}
	return true, nil
}

// clearEnv drops the run's globals (and so obj) so a pooled state holds no
// object alive.
func (vm *luaVM) clearEnv() {
	vm.L.Env = vm.blank
	vm.L.G.Global = vm.blank
	vm.env = nil
	vm.cur = [numLibs]*lua.LTable{}
	vm.L.SetMetatable(lua.LString(""), lua.LNil)
	vm.L.SetTop(0)
}

// resultFromLua applies Argo CD's contract: a table whose status is one of
// the six health statuses; anything else is Unknown.
func resultFromLua(v lua.LValue) Result {
	tbl, ok := v.(*lua.LTable)
	if !ok {
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("the health script returned an invalid health status: want a table with status and message, got %s", v.Type())}
	}
	status, ok := tbl.RawGetString("status").(lua.LString)
	if !ok {
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("the health script returned an invalid health status: status is %s, not a string", tbl.RawGetString("status").Type())}
	}
	if !Valid(Status(status)) {
		return Result{Status: StatusUnknown, Message: fmt.Sprintf("the health script returned an invalid health status %q", truncate(string(status), 64))}
	}
	var msg string
	switch m := tbl.RawGetString("message").(type) {
	case lua.LString:
		msg = string(m)
	case lua.LNumber:
		msg = m.String()
	}
	return Result{Status: Status(status), Message: msg}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
