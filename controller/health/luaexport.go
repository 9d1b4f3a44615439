package health

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Scripts other than health checks (resource actions) run in the same
// sandbox, under the same limits and on the same pooled Lua states as the
// checks: compile them once with CompileScript and run them with
// Engine.RunScript.

// Script is a Lua chunk compiled once, with its library mode.
type Script struct {
	name        string
	proto       *lua.FunctionProto
	useOpenLibs bool
}

// Name is the name the script was compiled under, as its errors show it.
func (s *Script) Name() string { return s.name }

// CompileScript parses and compiles src. name labels the script in syntax
// and run-time errors ("action(apps/Deployment restart)"); useOpenLibs
// gives the script the open libraries, as LuaCheck.UseOpenLibs does.
func CompileScript(name, src string, useOpenLibs bool) (*Script, error) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(boundConcat(chunk), name)
	if err != nil {
		return nil, err
	}
	return &Script{name: name, proto: proto, useOpenLibs: useOpenLibs}, nil
}

// ScriptError is a script's own failure: an error() it raised, a Lua
// run-time fault, or a returned value that cannot be read. Its Message is
// meant for the person who wrote the script.
type ScriptError struct {
	Script  string
	Message string
}

func (e *ScriptError) Error() string {
	if e.Script == "" || strings.HasPrefix(e.Message, e.Script+":") {
		return e.Message // Lua's own errors start with the script's name and line
	}
	return e.Script + ": " + e.Message
}

// Limits on the value a script returns to Go: how deeply tables nest and
// how many values they hold in all.
const (
	maxResultDepth  = 128
	maxResultValues = 1 << 20
)

// RunScript runs s with the given globals and returns the value its chunk
// returned, converted to JSON-like Go values: nil, bool, int64 (a whole
// number), float64, string, []any (a table with the keys 1..n) and
// map[string]any (a table with string keys, or an empty table). A global
// holding a map[string]any is given to the script as obj is to a health
// check (metadata.managedFields left out); other values as they are.
//
// The error is a *ScriptError when the script failed or returned what
// cannot be converted (a function, a cycle, mixed keys, NaN); it wraps
// ErrScriptTimeout or ErrScriptMemory when a limit stopped the run, or is
// ctx's error.
func (e *Engine) RunScript(ctx context.Context, s *Script, globals map[string]any) (any, error) {
	if s == nil {
		return nil, errors.New("lua: nil script")
	}
	var out any
	err := e.execute(ctx, s.proto, s.useOpenLibs,
		func(L *lua.LState, env *lua.LTable) {
			for name, v := range globals {
				if m, ok := v.(map[string]any); ok {
					env.RawSetString(name, objectToLua(L, m))
				} else {
					env.RawSetString(name, toLua(L, v))
				}
			}
		},
		func(_ *lua.LState, ret lua.LValue) error {
			c := fromLuaConv{seen: map[*lua.LTable]bool{}}
			v, err := c.value(ret, 0)
			out = v
			return err
		})
	if se, ok := errors.AsType[*ScriptError](err); ok {
		se.Script = s.name
		return nil, se
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return out, nil
}

// fromLuaConv converts one returned value, counting what it builds.
type fromLuaConv struct {
	seen   map[*lua.LTable]bool // tables on the current path
	values int
}

func (c *fromLuaConv) value(v lua.LValue, depth int) (any, error) {
	c.values++
	if c.values > maxResultValues {
		return nil, fmt.Errorf("the returned value holds more than %d values", maxResultValues)
	}
	switch x := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(x), nil
	case lua.LString:
		return string(x), nil
	case lua.LNumber:
		f := float64(x)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return nil, fmt.Errorf("the returned value holds the number %s, which JSON cannot carry", x)
		case f == math.Trunc(f) && math.Abs(f) < 1<<53:
			return int64(f), nil
		}
		return f, nil
	case *lua.LTable:
		return c.table(x, depth)
	default:
		return nil, fmt.Errorf("the returned value holds a %s, which cannot be converted", v.Type())
	}
}

func (c *fromLuaConv) table(t *lua.LTable, depth int) (any, error) {
	if c.seen[t] {
		return nil, errors.New("the returned value holds a table that contains itself")
	}
	if depth >= maxResultDepth {
		return nil, fmt.Errorf("the returned value nests tables deeper than %d", maxResultDepth)
	}
	c.seen[t] = true
	defer delete(c.seen, t)

	keys, numKeys, bad := tableKeys(t)
	switch {
	case bad != nil:
		return nil, fmt.Errorf("the returned value holds a table keyed by a %s", bad.Type())
	case numKeys > 0 && len(keys) > 0:
		return nil, errors.New("the returned value holds a table with both string and number keys")
	case numKeys > 0:
		list := make([]any, 0, numKeys)
		for i := 1; i <= numKeys; i++ {
			item := t.RawGetInt(i)
			if item == lua.LNil {
				return nil, errors.New("the returned value holds a list with holes or keys that are not 1..n")
			}
			v, err := c.value(item, depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		return list, nil
	}
	sort.Strings(keys)
	m := make(map[string]any, len(keys))
	for _, k := range keys {
		v, err := c.value(t.RawGetString(k), depth+1)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

// tableKeys sorts out t's keys: the string ones, how many are numbers, and
// one of any other type (nil when there is none).
func tableKeys(t *lua.LTable) (strKeys []string, numKeys int, other lua.LValue) {
	t.ForEach(func(k, _ lua.LValue) {
		switch k := k.(type) {
		case lua.LString:
			strKeys = append(strKeys, string(k))
		case lua.LNumber:
			numKeys++
		default:
			other = k
		}
	})
	return strKeys, numKeys, other
}
