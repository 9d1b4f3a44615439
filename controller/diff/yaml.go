package diff

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// encodeYAML renders a JSON value as block YAML with sorted keys, the
// shape sigs.k8s.io/yaml produces. It is written for diff text: strings
// are quoted whenever a plain scalar could read back as anything else,
// and multi-line strings become literal blocks so that a change to one
// line of a script shows as one line. Tests check that sigs.k8s.io/yaml
// reads the output back to the same value.
func encodeYAML(v any) []byte {
	b := make([]byte, 0, 1024)
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return append(b, "{}\n"...)
		}
		return appendMap(b, x, 0, false)
	case []any:
		if len(x) == 0 {
			return append(b, "[]\n"...)
		}
		return appendList(b, x, 0)
	}
	b = appendScalar(b, v, 0)
	return append(b, '\n')
}

func spaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// appendMap writes m at indent; when inline the first key continues the
// current line (after "- ").
func appendMap(b []byte, m map[string]any, indent int, inline bool) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 || !inline {
			b = spaces(b, indent)
		}
		b = appendString(b, k, -1)
		b = append(b, ':')
		b = appendValue(b, m[k], indent, indent)
	}
	return b
}

// appendValue writes the value after "key:" or "-"; nested collections
// go to the next lines, maps indented by two under a key and lists at the
// key's own indent, as sigs.k8s.io/yaml does.
func appendValue(b []byte, v any, indent, listIndent int) []byte {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return append(b, " {}\n"...)
		}
		b = append(b, '\n')
		return appendMap(b, x, indent+2, false)
	case []any:
		if len(x) == 0 {
			return append(b, " []\n"...)
		}
		b = append(b, '\n')
		return appendList(b, x, listIndent)
	}
	b = append(b, ' ')
	b = appendScalar(b, v, indent+2)
	return append(b, '\n')
}

func appendList(b []byte, l []any, indent int) []byte {
	for _, v := range l {
		b = spaces(b, indent)
		b = append(b, '-')
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				b = append(b, " {}\n"...)
				continue
			}
			b = append(b, ' ')
			b = appendMap(b, x, indent+2, true)
		case []any:
			b = appendValue(b, x, indent, indent+2)
		default:
			b = append(b, ' ')
			b = appendScalar(b, v, indent+2)
			b = append(b, '\n')
		}
	}
	return b
}

func appendScalar(b []byte, v any, blockIndent int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case string:
		return appendString(b, x, blockIndent)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int:
		return strconv.AppendInt(b, int64(x), 10)
	}
	f, ok := toFloat(v)
	if !ok {
		return append(b, "null"...)
	}
	switch {
	case math.IsNaN(f):
		return append(b, ".nan"...)
	case math.IsInf(f, 1):
		return append(b, ".inf"...)
	case math.IsInf(f, -1):
		return append(b, "-.inf"...)
	case f == math.Trunc(f) && math.Abs(f) < 1e21:
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendString writes s plain when that is unambiguous, as a literal
// block when it spans lines (blockIndent >= 0), else double-quoted.
func appendString(b []byte, s string, blockIndent int) []byte {
	if plainSafe(s) {
		return append(b, s...)
	}
	if blockIndent >= 0 && blockSafe(s) {
		body := strings.TrimRight(s, "\n")
		trailing := len(s) - len(body)
		switch trailing {
		case 0:
			b = append(b, "|-"...)
		case 1:
			b = append(b, '|')
		default:
			b = append(b, "|+"...)
		}
		for line := range strings.SplitSeq(body, "\n") {
			b = append(b, '\n')
			if line != "" {
				b = spaces(b, blockIndent)
				b = append(b, line...)
			}
		}
		for i := 1; i < trailing; i++ {
			b = append(b, '\n')
		}
		return b
	}
	return strconv.AppendQuote(b, s)
}

var yamlWords = map[string]bool{
	"y": true, "yes": true, "n": true, "no": true, "true": true, "false": true,
	"on": true, "off": true, "null": true, "~": true,
}

var unitSuffixes = []string{"m", "k", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "M", "G", "T", "P", "E", "s", "ms", "h"}

// plainSafe accepts strings that any YAML 1.1 or 1.2 reader takes back as
// the same string.
func plainSafe(s string) bool {
	if s == "" || len(s) > 256 || yamlWords[strings.ToLower(s)] {
		return false
	}
	c := s[0]
	if c >= '0' && c <= '9' {
		return unitNumber(s)
	}
	if !isLetter(c) && c != '/' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func plainByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/'
}

// unitNumber accepts "100m", "1.5Gi", "30s": digits, one optional
// fraction, and a unit suffix, which no YAML reader takes for a number.
func unitNumber(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
		i = j
	}
	return i < len(s) && slices.Contains(unitSuffixes, s[i:])
}

// blockSafe accepts multi-line strings that a literal block keeps exactly.
func blockSafe(s string) bool {
	if !strings.Contains(s, "\n") || !utf8.ValidString(s) || strings.TrimRight(s, "\n") == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r == '\u0085' || r == '\u2028' || r == '\u2029' || r == '\ufeff':
			return false
		case !unicode.IsPrint(r):
			return false
		}
	}
	first := true
	for line := range strings.SplitSeq(s, "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" && line != "" {
			return false // whitespace-only lines do not survive a block
		}
		if first && line != "" {
			if trimmed != line {
				return false // the first line fixes the indentation
			}
			first = false
		}
	}
	return true
}
