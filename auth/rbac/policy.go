package rbac

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Keys of the graphcd-rbac-cm data, the same as argocd-rbac-cm's.
const (
	KeyPolicyCSV     = "policy.csv"
	KeyPolicyDefault = "policy.default"
	KeyMatchMode     = "policy.matchMode"
	KeyScopes        = "scopes"
)

// MatchMode says how the resource, action and object of a rule match a
// request.
type MatchMode string

const (
	// MatchGlob: `*` is any text (`/` included), `?` one character,
	// `[abc]` a class, `{a,b}` alternatives. The default.
	MatchGlob MatchMode = "glob"
	// MatchRegex: the field is a Go regular expression that must match the
	// whole value (graphcd anchors it; Argo CD does not).
	MatchRegex MatchMode = "regex"
)

// Effect is what a matching rule does.
type Effect string

// Effects of a rule; a deny beats any number of allows.
const (
	Allow Effect = "allow"
	Deny  Effect = "deny"
)

// Source names where a line of policy came from, for messages.
type Source struct {
	Key  string // "policy.csv", "policy.team.csv", a file name, or "project <name> role <role>"
	Line int    // 1-based within Key
}

func (s Source) String() string { return fmt.Sprintf("%s line %d", s.Key, s.Line) }

// Rule is a `p, subject, resource, action, object, effect` line.
type Rule struct {
	Subject, Resource, Action, Object string
	Effect                            Effect
	Source                            Source
}

// Binding is a `g, subject, role` line: subject (a user, group or role)
// gets every right of role.
type Binding struct {
	Subject, Role string
	Source        Source
}

// Policy is a parsed graphcd-rbac-cm (or argocd-rbac-cm). Build one with
// Parse; the zero value is an empty glob policy with no default role.
type Policy struct {
	Rules       []Rule
	Bindings    []Binding
	DefaultRole string
	MatchMode   MatchMode
	// Scopes are the token claims whose values are groups.
	Scopes []string
}

// LineError is one invalid policy line; the line is left out of the policy.
type LineError struct {
	Source
	Reason string
}

func (e *LineError) Error() string { return e.String() + ": " + e.Reason }

// ValidationError lists every invalid line of a policy.
type ValidationError struct {
	Lines []*LineError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Lines))
	for i, l := range e.Lines {
		msgs[i] = l.Error()
	}
	return fmt.Sprintf("%d invalid policy line(s): %s", len(e.Lines), strings.Join(msgs, "; "))
}

// Parse reads the data of an RBAC ConfigMap: policy.csv, then every
// policy.<name>.csv in sorted key order, policy.default, policy.matchMode
// and scopes. Invalid lines are left out and reported together in a
// *ValidationError, returned with the policy built from the valid lines.
// An invalid policy.matchMode or scopes returns no policy: guessing would
// change who may do what.
func Parse(data map[string]string) (*Policy, error) {
	p := &Policy{MatchMode: MatchGlob, Scopes: []string{"groups"}, DefaultRole: strings.TrimSpace(data[KeyPolicyDefault])}
	if v, ok := data[KeyMatchMode]; ok && strings.TrimSpace(v) != "" {
		switch m := MatchMode(strings.TrimSpace(v)); m {
		case MatchGlob, MatchRegex:
			p.MatchMode = m
		default:
			return nil, fmt.Errorf("%s: %q is not glob or regex", KeyMatchMode, v)
		}
	}
	if v, ok := data[KeyScopes]; ok && strings.TrimSpace(v) != "" {
		scopes, err := parseScopes(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyScopes, err)
		}
		p.Scopes = scopes
	}
	var errs []*LineError
	for _, key := range policyKeys(data) {
		errs = append(errs, p.addCSV(key, data[key])...)
	}
	if len(errs) > 0 {
		return p, &ValidationError{Lines: errs}
	}
	return p, nil
}

// AddCSV adds the lines of a policy CSV file named name (for messages) to
// p, with the same validation as Parse.
func (p *Policy) AddCSV(name, text string) error {
	if errs := p.addCSV(name, text); len(errs) > 0 {
		return &ValidationError{Lines: errs}
	}
	return nil
}

// policyKeys returns policy.csv then the policy.<name>.csv keys, sorted,
// as Argo CD concatenates them.
func policyKeys(data map[string]string) []string {
	var extra []string
	for k := range data {
		if k != KeyPolicyCSV && strings.HasPrefix(k, "policy.") && strings.HasSuffix(k, ".csv") && len(k) > len("policy..csv") {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	if _, ok := data[KeyPolicyCSV]; ok {
		return append([]string{KeyPolicyCSV}, extra...)
	}
	return extra
}

// parseScopes reads "[groups, email]" (a YAML flow list) or a bare
// comma-separated list.
func parseScopes(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") != strings.HasSuffix(v, "]") {
		return nil, fmt.Errorf("%q: want a list such as [groups, email]", v)
	}
	v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
	var scopes []string
	for s := range strings.SplitSeq(v, ",") {
		s = strings.Trim(strings.TrimSpace(s), `"'`)
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "[]{}:\n") {
			return nil, fmt.Errorf("%q is not a claim name", s)
		}
		scopes = append(scopes, s)
	}
	if len(scopes) == 0 {
		return nil, errors.New("no claim names")
	}
	return scopes, nil
}

func (p *Policy) addCSV(key, text string) []*LineError {
	var errs []*LineError
	for i, line := range strings.Split(text, "\n") {
		src := Source{Key: key, Line: i + 1}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields, err := splitLine(line)
		if err != nil {
			errs = append(errs, &LineError{src, err.Error()})
			continue
		}
		switch fields[0] {
		case "p":
			r, err := parseRule(fields, p.mode())
			if err != nil {
				errs = append(errs, &LineError{src, err.Error()})
				continue
			}
			r.Source = src
			p.Rules = append(p.Rules, r)
		case "g":
			b, err := parseBinding(fields)
			if err != nil {
				errs = append(errs, &LineError{src, err.Error()})
				continue
			}
			b.Source = src
			p.Bindings = append(p.Bindings, b)
		default:
			errs = append(errs, &LineError{src, fmt.Sprintf("line type %q is not p or g", clip(fields[0]))})
		}
	}
	return errs
}

func (p *Policy) mode() MatchMode {
	if p.MatchMode == "" {
		return MatchGlob
	}
	return p.MatchMode
}

// splitLine splits one CSV line; fields may be quoted, so a regex may hold
// a comma.
func splitLine(line string) ([]string, error) {
	r := csv.NewReader(strings.NewReader(line))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = -1
	fields, err := r.Read()
	if err == nil {
		if _, err2 := r.Read(); !errors.Is(err2, io.EOF) {
			err = errors.New("more than one record on the line")
		}
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("not a CSV line: %w", err)
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields, nil
}

func parseRule(f []string, mode MatchMode) (Rule, error) {
	if len(f) != 5 && len(f) != 6 {
		return Rule{}, fmt.Errorf("a p line has 6 fields (p, subject, resource, action, object, effect), this one has %d", len(f))
	}
	r := Rule{Subject: f[1], Resource: f[2], Action: f[3], Object: f[4], Effect: Allow}
	if len(f) == 6 {
		switch e := Effect(f[5]); e {
		case Allow, Deny:
			r.Effect = e
		default:
			return Rule{}, fmt.Errorf("effect %q is not allow or deny", clip(f[5]))
		}
	}
	for i, name := range []string{"subject", "resource", "action", "object"} {
		if f[i+1] == "" {
			return Rule{}, fmt.Errorf("%s is empty", name)
		}
	}
	for _, field := range []string{r.Resource, r.Action, r.Object} {
		if _, err := compilePattern(field, mode); err != nil {
			return Rule{}, err
		}
	}
	if err := checkResource(r.Resource, mode); err != nil {
		return Rule{}, err
	}
	if err := checkAction(r.Action, mode); err != nil {
		return Rule{}, err
	}
	return r, nil
}

func parseBinding(f []string) (Binding, error) {
	if len(f) != 3 {
		return Binding{}, fmt.Errorf("a g line has 3 fields (g, subject, role), this one has %d", len(f))
	}
	if f[1] == "" || f[2] == "" {
		return Binding{}, errors.New("subject and role must not be empty")
	}
	if f[1] == f[2] {
		return Binding{}, errors.New("binds a subject to itself")
	}
	return Binding{Subject: f[1], Role: f[2]}, nil
}

// checkResource accepts a known resource, or a pattern matching one.
func checkResource(res string, mode MatchMode) error {
	if Known(res) {
		return nil
	}
	m, _ := compilePattern(res, mode)
	for _, known := range Resources {
		if m.match(known) {
			return nil
		}
	}
	return fmt.Errorf("unknown resource %q (want one of %s)", clip(res), strings.Join(Resources, ", "))
}

// checkAction accepts a known action, an action/, update/ or delete/
// sub-action, or a pattern.
func checkAction(act string, mode MatchMode) error {
	if slices.Contains(Actions, act) || act == "invoke" {
		return nil
	}
	for _, prefix := range []string{"action/", "update/", "delete/"} {
		if strings.HasPrefix(act, prefix) && len(act) > len(prefix) {
			return nil
		}
	}
	if isPattern(act, mode) {
		return nil
	}
	return fmt.Errorf("unknown action %q (want %s, action/<group>/<kind>/<name>, update/... or delete/...)", clip(act), strings.Join(Actions, ", "))
}

var regexMeta = regexp.MustCompile(`[.*+?()|\[\]{}^$\\]`)

func isPattern(s string, mode MatchMode) bool {
	if mode == MatchRegex {
		return regexMeta.MatchString(s)
	}
	return strings.ContainsAny(s, "*?[{")
}

// clip shortens hostile input before it goes into a message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
