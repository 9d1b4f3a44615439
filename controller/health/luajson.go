package health

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// The json library, which Argo CD preloads for require("json") (its
// autoscaling/v1 HorizontalPodAutoscaler check decodes the conditions
// annotation with it). It behaves as Argo CD's: json.decode(s) returns the
// value, or nil and the error; null is nil, and a list drops its nulls.
// json.encode(v) returns the text, or nil and the error: an empty table is
// [], a table with the keys 1..n a list, a table with string keys an
// object (keys sorted); other tables, functions and the like cannot be
// encoded. Both count what they build against the run's memory budget,
// and encode refuses a result over maxLuaString, like every other string a
// script can build.

// maxJSONDepth bounds the nesting json.encode follows, so that a chain of
// tables built in a loop cannot exhaust the Go stack.
const maxJSONDepth = 1000

// jsonDecode is json.decode.
func jsonDecode(L *lua.LState) int {
	s := L.CheckString(1)
	charge(L, len(s))
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	L.Push(toLua(L, v))
	return 1
}

// jsonEncode is json.encode.
func jsonEncode(L *lua.LState) int {
	e := jsonEncoder{L: L, seen: map[*lua.LTable]bool{}}
	if err := e.value(L.CheckAny(1), 0); err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	charge(L, len(e.buf))
	L.Push(lua.LString(e.buf))
	return 1
}

// jsonEncoder writes one value. Errors it returns are the script's to
// handle; errors it raises (a cycle, the size bound) end the script.
type jsonEncoder struct {
	L    *lua.LState
	buf  []byte
	seen map[*lua.LTable]bool // tables on the path being encoded
}

func (e *jsonEncoder) value(v lua.LValue, depth int) error {
	switch x := v.(type) {
	case *lua.LNilType:
		e.buf = append(e.buf, "null"...)
	case lua.LBool:
		e.buf = strconv.AppendBool(e.buf, bool(x))
	case lua.LNumber:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errors.New("json: unsupported value: " + x.String())
		}
		b, _ := json.Marshal(f)
		e.buf = append(e.buf, b...)
	case lua.LString:
		e.grow(len(x))
		b, _ := json.Marshal(string(x))
		e.buf = append(e.buf, b...)
	case *lua.LTable:
		if err := e.table(x, depth); err != nil {
			return err
		}
	default:
		return errors.New("cannot encode " + v.Type().String() + " to JSON")
	}
	e.grow(0)
	return nil
}

func (e *jsonEncoder) table(t *lua.LTable, depth int) error {
	if e.seen[t] {
		e.L.RaiseError("json.encode: cannot encode recursively nested tables")
	}
	if depth >= maxJSONDepth {
		e.L.RaiseError("json.encode: tables nested deeper than %d", maxJSONDepth)
	}
	e.seen[t] = true
	defer delete(e.seen, t)

	strKeys, numKeys, other := tableKeys(t)
	switch {
	case other != nil || (numKeys > 0 && len(strKeys) > 0):
		return errors.New("cannot encode a table with mixed or invalid key types to JSON")
	case len(strKeys) > 0:
		slices.Sort(strKeys)
		e.buf = append(e.buf, '{')
		for i, k := range strKeys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(lua.LString(k), depth+1); err != nil {
				return err
			}
			e.buf = append(e.buf, ':')
			if err := e.value(t.RawGetString(k), depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	default: // a list, or an empty table
		e.buf = append(e.buf, '[')
		for i := 1; i <= numKeys; i++ {
			item := t.RawGetInt(i)
			if item == lua.LNil {
				return errors.New("cannot encode a sparse array to JSON")
			}
			if i > 1 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(item, depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	}
	return nil
}

// grow raises the script's error when the text, with n more bytes, would
// pass maxLuaString.
func (e *jsonEncoder) grow(n int) {
	if len(e.buf)+n > maxLuaString {
		e.L.RaiseError("json.encode: result would exceed %d bytes", maxLuaString)
	}
}
