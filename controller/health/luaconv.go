package health

import (
	"encoding/json"

	lua "github.com/yuin/gopher-lua"
)

// objectToLua converts an object to the Lua table scripts see as obj: JSON
// numbers become Lua numbers, lists 1-based tables without their nulls,
// maps tables.
// metadata.managedFields is left out: no health check needs it and it is
// often the largest part of an object.
func objectToLua(L *lua.LState, obj map[string]any) *lua.LTable {
	tbl := L.CreateTable(0, len(obj))
	for k, v := range obj {
		if meta, ok := v.(map[string]any); ok && k == "metadata" {
			mt := L.CreateTable(0, len(meta))
			for mk, mv := range meta {
				if mk == "managedFields" {
					continue
				}
				mt.RawSetString(mk, toLua(L, mv))
			}
			tbl.RawSetString(k, mt)
			continue
		}
		tbl.RawSetString(k, toLua(L, v))
	}
	return tbl
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case int:
		return lua.LNumber(x)
	case int32:
		return lua.LNumber(x)
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return lua.LNumber(f)
		}
		return lua.LString(x)
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, item := range x {
			t.RawSetString(k, toLua(L, item))
		}
		return t
	case []any:
		// As in Argo CD, a null item is dropped, not left as a hole that
		// would end ipairs and make # ambiguous.
		t := L.CreateTable(len(x), 0)
		n := 0
		for _, item := range x {
			if v := toLua(L, item); v != lua.LNil {
				n++
				t.RawSetInt(n, v)
			}
		}
		return t
	default:
		return lua.LNil
	}
}
