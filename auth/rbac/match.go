package rbac

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher matches a request value against one policy field.
type matcher struct {
	literal string
	any     bool
	re      *regexp.Regexp
}

func (m matcher) match(s string) bool {
	switch {
	case m.any:
		return true
	case m.re != nil:
		return m.re.MatchString(s)
	default:
		return s == m.literal
	}
}

// compilePattern turns a policy field into a matcher. In glob mode `*`
// crosses `/`, as in Argo CD.
func compilePattern(p string, mode MatchMode) (matcher, error) {
	if !isPattern(p, mode) {
		return matcher{literal: p}, nil
	}
	if mode != MatchRegex && p == "*" {
		return matcher{any: true}, nil
	}
	expr := p
	if mode != MatchRegex {
		var err error
		if expr, err = globToRegexp(p); err != nil {
			return matcher{}, fmt.Errorf("pattern %q: %w", clip(p), err)
		}
	}
	re, err := regexp.Compile(`^(?:` + expr + `)$`)
	if err != nil {
		return matcher{}, fmt.Errorf("pattern %q: %w", clip(p), unwrapRegexpError(err))
	}
	return matcher{re: re}, nil
}

func unwrapRegexpError(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) {
		return errors.New(string(se.Code))
	}
	return err
}

// globToRegexp translates a glob: `*` any text, `?` one character,
// `[...]`/`[!...]` a class, `{a,b}` alternatives, `\x` a literal x.
func globToRegexp(g string) (string, error) {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 == len(g) {
				return "", errors.New("ends with a lone \\")
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				return "", errors.New("unclosed [")
			}
			class := g[i+1 : i+1+end]
			if class == "" || class == "!" {
				return "", errors.New("empty character class")
			}
			b.WriteByte('[')
			if class[0] == '!' {
				b.WriteByte('^')
				class = class[1:]
			}
			for j := 0; j < len(class); j++ {
				c := class[j]
				switch {
				case c == '-' && j > 0 && j < len(class)-1:
					b.WriteByte('-')
				case c > 0x20 && c < 0x7f && !isAlnum(c):
					b.WriteByte('\\')
					b.WriteByte(c)
				default:
					b.WriteByte(c)
				}
			}
			b.WriteByte(']')
			i += end + 1
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth == 0 {
				return "", errors.New("unopened }")
			}
			depth--
			b.WriteByte(')')
		case ',':
			if depth > 0 {
				b.WriteByte('|')
			} else {
				b.WriteByte(',')
			}
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	if depth > 0 {
		return "", errors.New("unclosed {")
	}
	return b.String(), nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
