package health

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/pm"
)

// maxLuaString bounds the strings that `..`, string.rep, string.gsub,
// string.format and table.concat may build, so that string.rep("x", 1e10)
// fails with a Lua error instead of exhausting memory.
const maxLuaString = 4 << 20

// The functions each library keeps. Everything else gopher-lua offers is
// left out: dofile, loadfile, load and loadstring (code from outside the
// script), module, collectgarbage (stalls the process), getfenv and setfenv
// (reach environments shared between runs), string.dump, math.randomseed
// (global state), and the io, os, debug and channel libraries.
var (
	baseNames  = []string{"assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable", "tonumber", "tostring", "type", "unpack", "xpcall"}
	tableNames = []string{"getn", "insert", "maxn", "remove", "sort"}
	strNames   = []string{"byte", "char", "find", "gfind", "gmatch", "len", "lower", "match", "reverse", "sub", "upper"}
	mathNames  = []string{"abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor", "fmod", "frexp", "huge", "ldexp", "log", "log10", "max", "min", "mod", "modf", "pi", "pow", "rad", "random", "sin", "sinh", "sqrt", "tan", "tanh"}
	coNames    = []string{"create", "resume", "running", "status", "wrap", "yield"}
)

// Library indexes. The first three are always available; the rest only
// with open libraries. json, as in Argo CD, is only reached through
// require("json"): it is no global.
const (
	libTable = iota
	libOS
	libJSON
	libString
	libMath
	libCoroutine
	numLibs
)

const jsonLibName = "json"

var libNames = [numLibs]string{lua.TabLibName, lua.OsLibName, jsonLibName, lua.StringLibName, lua.MathLibName, lua.CoroutineLibName}

// libIndex returns the index of a library name available in this mode, or
// -1.
func libIndex(name string, open bool) int {
	for i, n := range libNames {
		if n == name {
			if i >= libString && !open {
				return -1
			}
			return i
		}
	}
	return -1
}

// globalLib returns the index of the library a global name stands for in
// this mode, or -1.
func globalLib(name string, open bool) int {
	if name == jsonLibName {
		return -1
	}
	return libIndex(name, open)
}

// captureLibraries opens gopher-lua's libraries once in a scratch
// environment and keeps the allowed functions, plus graphcd's guarded and
// safe replacements.
func (vm *luaVM) captureLibraries() {
	L := vm.L
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	global := L.G.Global
	pick := func(tbl lua.LValue, names []string) []libEntry {
		t, _ := tbl.(*lua.LTable)
		out := make([]libEntry, 0, len(names)+2)
		for _, n := range names {
			if t == nil {
				break
			}
			if v := t.RawGetString(n); v != lua.LNil {
				out = append(out, libEntry{n, v})
			}
		}
		return out
	}
	vm.globals = make(map[string]lua.LValue, len(baseNames)+3)
	for _, e := range pick(global, baseNames) {
		vm.globals[e.name] = e.value
	}
	vm.globals["print"] = L.NewFunction(func(*lua.LState) int { return 0 })
	vm.globals["_VERSION"] = lua.LString(lua.LuaVersion)
	vm.globals["require"] = L.NewFunction(vm.luaRequire)

	vm.libs[libTable] = append(pick(global.RawGetString("table"), tableNames),
		libEntry{"concat", L.NewFunction(tableConcat)},
	)
	vm.libs[libString] = append(pick(global.RawGetString("string"), strNames),
		libEntry{"rep", L.NewFunction(strRep)},
		libEntry{"gsub", L.NewFunction(strGsub)},
	)
	if str, ok := global.RawGetString("string").(*lua.LTable); ok {
		if f, ok := str.RawGetString("format").(*lua.LFunction); ok && f.IsG {
			vm.libs[libString] = append(vm.libs[libString], libEntry{"format", L.NewFunction(strFormat(f.GFunction))})
		}
	}
	vm.concat = L.NewFunction(luaConcat)
	vm.libs[libMath] = pick(global.RawGetString("math"), mathNames)
	vm.libs[libCoroutine] = pick(global.RawGetString("coroutine"), coNames)
	vm.libs[libOS] = []libEntry{
		{"time", L.NewFunction(osTime)},
		{"date", L.NewFunction(osDate)},
		{"difftime", L.NewFunction(osDifftime)},
		{"clock", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(time.Since(vm.started).Seconds()))
			return 1
		})},
	}
	vm.libs[libJSON] = []libEntry{
		{"decode", L.NewFunction(jsonDecode)},
		{"encode", L.NewFunction(jsonEncode)},
	}

	vm.envMeta = L.CreateTable(0, 2)
	vm.envMeta.RawSetString("__index", L.NewFunction(vm.globalIndex))
	vm.envMeta.RawSetString("__metatable", lua.LFalse)
	vm.strIndex = L.NewFunction(func(L *lua.LState) int {
		L.Push(L.GetField(vm.lib(libString), L.CheckString(2)))
		return 1
	})

	vm.blank = L.NewTable()
	L.Env = vm.blank
	L.G.Global = vm.blank
	L.SetTop(0)
}

// newEnv starts a run: a fresh global table, no library tables built yet.
// Restricted (Argo CD's default) offers the base functions, table, os
// (time, date, clock) and require for those; open libraries add string
// (with method calls on strings), math and coroutine.
func (vm *luaVM) newEnv(open bool) *lua.LTable {
	L := vm.L
	env := L.NewTable()
	env.Metatable = vm.envMeta
	vm.env = env
	vm.open = open
	vm.cur = [numLibs]*lua.LTable{}
	L.Env = env
	L.G.Global = env
	if open {
		mt := L.CreateTable(0, 1)
		mt.RawSetString("__index", vm.strIndex)
		L.SetMetatable(lua.LString(""), mt)
	} else {
		L.SetMetatable(lua.LString(""), lua.LNil)
	}
	return env
}

// lib returns the current run's table for library i, building it on first
// use.
func (vm *luaVM) lib(i int) *lua.LTable {
	if t := vm.cur[i]; t != nil {
		return t
	}
	t := vm.L.CreateTable(0, len(vm.libs[i]))
	for _, e := range vm.libs[i] {
		t.RawSetString(e.name, e.value)
	}
	vm.cur[i] = t
	return t
}

// globalIndex resolves a global the script has not set: _G, a library
// (stored into the globals so later reads are direct), package, or a base
// function.
func (vm *luaVM) globalIndex(L *lua.LState) int {
	env := L.CheckTable(1)
	key, ok := L.Get(2).(lua.LString)
	if !ok {
		L.Push(lua.LNil)
		return 1
	}
	name := string(key)
	v := lua.LNil
	switch {
	case name == "_G":
		v = env
	case name == "package":
		loaded := L.CreateTable(0, numLibs+1)
		loaded.RawSetString("_G", env)
		for i, n := range libNames {
			if globalLib(n, vm.open) >= 0 {
				loaded.RawSetString(n, vm.lib(i))
			}
		}
		pkg := L.CreateTable(0, 1)
		pkg.RawSetString("loaded", loaded)
		v = pkg
	case globalLib(name, vm.open) >= 0:
		v = vm.lib(globalLib(name, vm.open))
	default:
		if g, ok := vm.globals[name]; ok {
			L.Push(g)
			return 1
		}
	}
	if v != lua.LNil {
		env.RawSetString(name, v)
	}
	L.Push(v)
	return 1
}

// luaRequire is require: it returns the libraries the run may use and
// nothing else; no file is ever loaded.
func (vm *luaVM) luaRequire(L *lua.LState) int {
	name := L.CheckString(1)
	if name == "_G" && vm.env != nil {
		L.Push(vm.env)
		return 1
	}
	i := libIndex(name, vm.open)
	if i < 0 || vm.env == nil {
		L.RaiseError("module %q not found: health scripts may only require the libraries they were given", name)
	}
	L.Push(vm.lib(i))
	return 1
}

// strRep is string.rep with a bound on the result.
func strRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if n > maxLuaString/len(s) {
		L.RaiseError("string.rep: result would exceed %d bytes", maxLuaString)
	}
	charge(L, len(s)*n)
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

// tableConcat is table.concat with a bound on the result.
func tableConcat(L *lua.LState) int {
	tbl := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt(3, 1)
	j := L.OptInt(4, tbl.Len())
	var b strings.Builder
	for k := i; k <= j; k++ {
		v := tbl.RawGetInt(k)
		if !lua.LVCanConvToString(v) {
			L.RaiseError("invalid value (%s) at index %d in table for concat", v.Type(), k)
		}
		b.WriteString(lua.LVAsString(v))
		if k < j {
			b.WriteString(sep)
		}
		if b.Len() > maxLuaString {
			L.RaiseError("table.concat: result would exceed %d bytes", maxLuaString)
		}
	}
	charge(L, b.Len())
	L.Push(lua.LString(b.String()))
	return 1
}

// strGsub is string.gsub built in one pass with a bound on the result.
// (gopher-lua's own copies the whole string once per match.)
func strGsub(L *lua.LState) int {
	str := L.CheckString(1)
	pat := L.CheckString(2)
	L.CheckTypes(3, lua.LTString, lua.LTTable, lua.LTFunction)
	repl := L.Get(3)
	limit := L.OptInt(4, -1)
	matches, err := pm.Find(pat, []byte(str), 0, limit)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		start, end := m.Capture(0), m.Capture(1)
		b.WriteString(str[last:start])
		switch r := repl.(type) {
		case lua.LString:
			expandReplacement(L, &b, str, string(r), m)
		case *lua.LTable:
			key := captureValue(L, str, m, firstCapture(m))
			writeReplacement(L, &b, L.GetTable(r, key), str[start:end])
		case *lua.LFunction:
			n := max(m.CaptureLength()/2-1, 1)
			args := make([]lua.LValue, 0, n)
			for c := range n {
				idx := 2 * (c + 1)
				if m.CaptureLength() <= 2 {
					idx = 0
				}
				args = append(args, captureValue(L, str, m, idx))
			}
			L.Push(r)
			for _, a := range args {
				L.Push(a)
			}
			L.Call(len(args), 1)
			v := L.Get(-1)
			L.Pop(1)
			writeReplacement(L, &b, v, str[start:end])
		}
		last = end
		if b.Len() > maxLuaString {
			L.RaiseError("string.gsub: result would exceed %d bytes", maxLuaString)
		}
	}
	b.WriteString(str[last:])
	if b.Len() > maxLuaString {
		L.RaiseError("string.gsub: result would exceed %d bytes", maxLuaString)
	}
	charge(L, b.Len())
	L.Push(lua.LString(b.String()))
	L.Push(lua.LNumber(len(matches)))
	return 2
}

// firstCapture is the capture a table or function replacement is keyed by:
// the first capture, or the whole match when the pattern has none.
func firstCapture(m *pm.MatchData) int {
	if m.CaptureLength() > 2 {
		return 2
	}
	return 0
}

func captureValue(L *lua.LState, str string, m *pm.MatchData, idx int) lua.LValue {
	if idx >= m.CaptureLength() {
		L.RaiseError("invalid capture index")
	}
	if m.IsPosCapture(idx) {
		return lua.LNumber(m.Capture(idx)) // pm reports positions 1-based
	}
	return lua.LString(str[m.Capture(idx):m.Capture(idx+1)])
}

// writeReplacement writes v, or the original match when v is false or nil.
func writeReplacement(L *lua.LState, b *strings.Builder, v lua.LValue, match string) {
	switch r := v.(type) {
	case lua.LString:
		b.WriteString(string(r))
	case lua.LNumber:
		b.WriteString(r.String())
	default:
		if lua.LVIsFalse(v) {
			b.WriteString(match)
			return
		}
		L.RaiseError("invalid replacement value (a %s)", v.Type())
	}
}

// expandReplacement writes a string replacement, expanding %0-%9 and %%.
func expandReplacement(L *lua.LState, b *strings.Builder, str, repl string, m *pm.MatchData) {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '%' || i == len(repl)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		d := repl[i]
		if d < '0' || d > '9' {
			b.WriteByte(d)
			continue
		}
		idx := 2 * int(d-'0')
		if idx == 2 && m.CaptureLength() <= 2 {
			idx = 0 // %1 without captures is the whole match
		}
		b.WriteString(lua.LVAsString(captureValue(L, str, m, idx)))
		if b.Len() > maxLuaString {
			L.RaiseError("string.gsub: result would exceed %d bytes", maxLuaString)
		}
	}
}

// osTime is os.time: now, or the time a date table describes (local
// time). As in Argo CD (gopher-lua), a field may be a number or a string
// holding one, as string.match returns them ("2024", "08"); a field that is
// missing or holds anything else takes its default (hour 12, min and sec 0,
// day, month and year -1) instead of failing the script.
func osTime(L *lua.LState) int {
	if L.GetTop() == 0 || L.Get(1) == lua.LNil {
		L.Push(lua.LNumber(time.Now().Unix()))
		return 1
	}
	tbl := L.CheckTable(1)
	field := func(name string, def int) int {
		if n, ok := dateField(tbl.RawGetString(name)); ok {
			return n
		}
		return def
	}
	t := time.Date(field("year", -1), time.Month(field("month", -1)), field("day", -1),
		field("hour", 12), field("min", 0), field("sec", 0), 0, time.Local)
	L.Push(lua.LNumber(t.Unix()))
	return 1
}

// maxDateField bounds a date table field, far beyond any real date, so
// that converting it to int cannot overflow.
const maxDateField = 1e12

// dateField reads a date table field: a number, or a string holding a
// decimal number (leading zeros are decimal, not octal) or a 0x
// hexadecimal one, surrounded by spaces or not. Fractions are dropped.
func dateField(v lua.LValue) (int, bool) {
	var f float64
	switch x := v.(type) {
	case lua.LNumber:
		f = float64(x)
	case lua.LString:
		s := strings.TrimSpace(string(x))
		neg := strings.HasPrefix(s, "-")
		digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
		if len(digits) > 2 && (digits[:2] == "0x" || digits[:2] == "0X") {
			n, err := strconv.ParseUint(digits[2:], 16, 63)
			if err != nil {
				return 0, false
			}
			f = float64(n)
			if neg {
				f = -f
			}
			break
		}
		if strings.ContainsAny(digits, "_xXpPiInN") {
			return 0, false // no Go-only syntax, infinities or NaN
		}
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, false
		}
		f = n
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.Abs(f) > maxDateField {
		return 0, false
	}
	return int(f), true
}

// osDifftime is os.difftime(t2, t1): t2 - t1 in seconds (t1 defaults to
// 0).
func osDifftime(L *lua.LState) int {
	L.Push(L.CheckNumber(1) - L.OptNumber(2, 0))
	return 1
}

// osDate is os.date(format, time): "*t" returns a table, a leading "!"
// means UTC, other formats follow strftime's common directives.
func osDate(L *lua.LState) int {
	format := L.OptString(1, "%c")
	t := time.Now()
	if L.GetTop() >= 2 {
		t = time.Unix(L.CheckInt64(2), 0)
	}
	if strings.HasPrefix(format, "!") {
		t = t.UTC()
		format = format[1:]
	} else {
		t = t.Local()
	}
	if len(format) > 256 {
		L.RaiseError("os.date: format longer than 256 bytes")
	}
	if strings.HasPrefix(format, "*t") {
		tbl := L.CreateTable(0, 9)
		tbl.RawSetString("year", lua.LNumber(t.Year()))
		tbl.RawSetString("month", lua.LNumber(t.Month()))
		tbl.RawSetString("day", lua.LNumber(t.Day()))
		tbl.RawSetString("hour", lua.LNumber(t.Hour()))
		tbl.RawSetString("min", lua.LNumber(t.Minute()))
		tbl.RawSetString("sec", lua.LNumber(t.Second()))
		tbl.RawSetString("wday", lua.LNumber(t.Weekday()+1))
		tbl.RawSetString("yday", lua.LNumber(t.YearDay()))
		tbl.RawSetString("isdst", lua.LFalse)
		L.Push(tbl)
		return 1
	}
	L.Push(lua.LString(strftime(t, format)))
	return 1
}

// strftimeLayouts maps strftime directives to Go layouts.
var strftimeLayouts = map[byte]string{
	'a': "Mon", 'A': "Monday", 'b': "Jan", 'B': "January", 'c': "Mon Jan  2 15:04:05 2006",
	'd': "02", 'F': "2006-01-02", 'H': "15", 'I': "03", 'm': "01", 'M': "04", 'p': "PM", 'P': "pm",
	'S': "05", 'x': "01/02/06", 'X': "15:04:05", 'y': "06", 'Y': "2006", 'z': "-0700", 'Z': "MST",
}

func strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i == len(format)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		d := format[i]
		switch {
		case d == '%':
			b.WriteByte('%')
		case d == 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case d == 'w':
			fmt.Fprintf(&b, "%d", int(t.Weekday()))
		case strftimeLayouts[d] != "":
			b.WriteString(t.Format(strftimeLayouts[d]))
		default:
			b.WriteByte('%')
			b.WriteByte(d)
		}
	}
	return b.String()
}
