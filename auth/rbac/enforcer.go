package rbac

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/casbin/casbin/v2"
	"github.com/casbin/casbin/v2/model"
)

// casbinModel is Argo CD's: a request and a rule are (subject, resource,
// action, object); roles are inherited through g; deny wins.
const casbinModel = `
[request_definition]
r = sub, res, act, obj

[policy_definition]
p = sub, res, act, obj, eft

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))

[matchers]
m = g(r.sub, p.sub) && fieldMatch(r.res, p.res) && fieldMatch(r.act, p.act) && fieldMatch(r.obj, p.obj)
`

// maxCachedDecisions bounds the decision cache; when full it starts over.
const maxCachedDecisions = 1 << 16

// Enforcer answers RBAC questions for one policy plus the roles of the
// projects given to SetProjectRoles. It is safe for concurrent use.
type Enforcer struct {
	mode        MatchMode
	defaultRole string
	scopes      []string

	mu       sync.RWMutex // guards casbin and projects
	casbin   *casbin.Enforcer
	projects map[string][]string // project -> role subjects added for it

	patterns sync.Map // policy field -> matcher
	// views holds, per subject, the compiled rules of the subject and the
	// roles it inherits: the same decisions as the whole policy, without
	// evaluating every other team's rules.
	views atomic.Pointer[sync.Map]
	// subjects holds every subject named by a rule or a binding: any other
	// subject is refused without asking casbin.
	subjects atomic.Pointer[map[string]bool]
	cache    atomic.Pointer[decisionCache]
}

type decisionCache struct {
	m sync.Map // request key -> bool
	n atomic.Int64
}

// NewEnforcer compiles p, together with the built-in roles, into an
// Enforcer. A nil p is an empty policy.
func NewEnforcer(p *Policy) (*Enforcer, error) {
	if p == nil {
		p = &Policy{}
	}
	m, err := model.NewModelFromString(casbinModel)
	if err != nil {
		return nil, fmt.Errorf("rbac model: %w", err)
	}
	e := &Enforcer{mode: p.mode(), defaultRole: p.DefaultRole, scopes: p.Scopes, projects: map[string][]string{}}
	if e.casbin, err = e.newCasbin(m); err != nil {
		return nil, err
	}
	for _, src := range []*Policy{builtinPolicy(p.mode()), p} {
		if err := e.add(src.Rules, src.Bindings); err != nil {
			return nil, err
		}
	}
	e.resetCache()
	return e, nil
}

// newCasbin returns the enforcer of the whole policy. Decisions come from
// the subjects' views; casbin keeps the rules and resolves the roles a
// subject inherits (and decides in tests, to check the views against).
func (e *Enforcer) newCasbin(m model.Model) (*casbin.Enforcer, error) {
	ce, err := casbin.NewEnforcer(m, false)
	if err != nil {
		return nil, fmt.Errorf("rbac enforcer: %w", err)
	}
	ce.AddFunction("fieldMatch", e.fieldMatch)
	return ce, nil
}

// view is what decides for one subject: the rules of the subject and of
// every role it inherits, with their patterns compiled. It decides as the
// casbin model does over the whole policy: allowed when a matching rule
// allows and none denies.
type view []viewRule

type viewRule struct {
	res, act, obj matcher
	deny          bool
}

func (v view) allows(res, act, obj string) bool {
	allowed := false
	for _, r := range v {
		if r.res.match(res) && r.act.match(act) && r.obj.match(obj) {
			if r.deny {
				return false
			}
			allowed = true
		}
	}
	return allowed
}

// view returns the view of sub, built once per subject and policy
// version. Evaluating casbin's matcher expression for each rule cost an
// uncached decision tens of microseconds; the first list of 10,000 apps
// asks 10,000 of them. Callers hold e.mu for reading.
func (e *Enforcer) view(sub string) (view, error) {
	views := e.views.Load()
	if v, ok := views.Load(sub); ok {
		return v.(view), nil
	}
	roles, err := e.casbin.GetImplicitRolesForUser(sub)
	if err != nil {
		return nil, err
	}
	var v view
	for _, s := range append([]string{sub}, roles...) {
		rules, err := e.casbin.GetFilteredPolicy(0, s)
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			if len(r) != 5 || (r[4] != string(Allow) && r[4] != string(Deny)) {
				continue
			}
			res, err1 := e.pattern(r[1])
			act, err2 := e.pattern(r[2])
			obj, err3 := e.pattern(r[3])
			if err := errors.Join(err1, err2, err3); err != nil {
				continue // an invalid pattern never matches; it was rejected at load
			}
			v = append(v, viewRule{res: res, act: act, obj: obj, deny: r[4] == string(Deny)})
		}
	}
	stored, _ := views.LoadOrStore(sub, v)
	return stored.(view), nil
}

// add loads rules and bindings, compiling their patterns once.
func (e *Enforcer) add(rules []Rule, bindings []Binding) error {
	var ps, gs [][]string
	for _, r := range rules {
		for _, f := range []string{r.Resource, r.Action, r.Object} {
			if _, err := e.pattern(f); err != nil {
				return fmt.Errorf("%s: %w", r.Source, err)
			}
		}
		ps = append(ps, []string{r.Subject, r.Resource, r.Action, r.Object, string(r.Effect)})
	}
	for _, b := range bindings {
		gs = append(gs, []string{b.Subject, b.Role})
	}
	if len(ps) > 0 {
		if _, err := e.casbin.AddPoliciesEx(ps); err != nil {
			return fmt.Errorf("load rules: %w", err)
		}
	}
	if len(gs) > 0 {
		if _, err := e.casbin.AddGroupingPoliciesEx(gs); err != nil {
			return fmt.Errorf("load bindings: %w", err)
		}
	}
	return e.refreshSubjects()
}

// refreshSubjects recomputes e.subjects after the policy changed.
func (e *Enforcer) refreshSubjects() error {
	rules, err := e.casbin.GetPolicy()
	if err != nil {
		return fmt.Errorf("list rules: %w", err)
	}
	bindings, err := e.casbin.GetGroupingPolicy()
	if err != nil {
		return fmt.Errorf("list bindings: %w", err)
	}
	subjects := make(map[string]bool, len(rules)+len(bindings))
	for _, r := range append(rules, bindings...) {
		if len(r) > 0 {
			subjects[r[0]] = true
		}
	}
	e.subjects.Store(&subjects)
	return nil
}

func (e *Enforcer) pattern(p string) (matcher, error) {
	if m, ok := e.patterns.Load(p); ok {
		return m.(matcher), nil
	}
	m, err := compilePattern(p, e.mode)
	if err != nil {
		return matcher{}, err
	}
	e.patterns.Store(p, m)
	return m, nil
}

// fieldMatch is the casbin function fieldMatch(request value, policy field).
func (e *Enforcer) fieldMatch(args ...any) (any, error) {
	if len(args) != 2 {
		return false, errors.New("fieldMatch takes 2 arguments")
	}
	val, _ := args[0].(string)
	pat, _ := args[1].(string)
	m, err := e.pattern(pat)
	if err != nil {
		return false, nil //nolint:nilerr // an invalid pattern never matches; it was rejected at load
	}
	return m.match(val), nil
}

// DefaultRole is the role every authenticated subject has.
func (e *Enforcer) DefaultRole() string { return e.defaultRole }

// Scopes are the token claims that carry groups.
func (e *Enforcer) Scopes() []string { return e.scopes }

// Enforce reports whether subject, a member of groups, may do action on
// object of resource. The default role is tried first (a deny cannot take
// its rights away), then the subject, then each group, each with its
// roles; one of them must be allowed by a rule and denied by none.
func (e *Enforcer) Enforce(subject string, groups []string, resource, action, object string) bool {
	if e.defaultRole != "" && e.enforceOne(e.defaultRole, resource, action, object) {
		return true
	}
	if subject != "" && e.enforceOne(subject, resource, action, object) {
		return true
	}
	for _, g := range groups {
		if g != "" && e.enforceOne(g, resource, action, object) {
			return true
		}
	}
	return false
}

func (e *Enforcer) enforceOne(sub, res, act, obj string) bool {
	if !(*e.subjects.Load())[sub] {
		return false
	}
	key := strings.Join([]string{sub, res, act, obj}, "\x00")
	c := e.cache.Load()
	if v, ok := c.m.Load(key); ok {
		return v.(bool)
	}
	e.mu.RLock()
	ok, err := e.decide(sub, res, act, obj)
	e.mu.RUnlock()
	if err != nil {
		return false
	}
	if c.n.Add(1) > maxCachedDecisions {
		fresh := &decisionCache{}
		e.cache.CompareAndSwap(c, fresh)
		c = fresh
	}
	c.m.Store(key, ok)
	return ok
}

func (e *Enforcer) decide(sub, res, act, obj string) (bool, error) {
	v, err := e.view(sub)
	if err != nil {
		return false, err
	}
	return v.allows(res, act, obj), nil
}

// resetCache forgets every decision and view; callers hold e.mu for
// writing (or own e alone), so nothing computed under the old policy is
// stored after this.
func (e *Enforcer) resetCache() {
	e.cache.Store(&decisionCache{})
	e.views.Store(&sync.Map{})
}

// GroupsFromClaims returns the groups of a token: the values of the claims
// named by scopes (strings, or lists of strings; other values are
// ignored), in order.
func GroupsFromClaims(claims map[string]any, scopes []string) []string {
	var groups []string
	for _, s := range scopes {
		switch v := claims[s].(type) {
		case string:
			groups = append(groups, v)
		case []string:
			groups = append(groups, v...)
		case []any:
			for _, g := range v {
				if g, ok := g.(string); ok {
					groups = append(groups, g)
				}
			}
		}
	}
	return groups
}

// Permissions returns the rules that apply to subject, a member of groups:
// those of the default role, the subject and each group, and of every role
// they inherit, without repeats, in that order. Rules are returned as
// written (Source is not kept).
func (e *Enforcer) Permissions(subject string, groups []string) []Rule {
	e.mu.RLock()
	defer e.mu.RUnlock()
	seen := map[[5]string]bool{}
	var out []Rule
	subjects := make([]string, 0, 2+len(groups))
	if e.defaultRole != "" {
		subjects = append(subjects, e.defaultRole)
	}
	if subject != "" {
		subjects = append(subjects, subject)
	}
	subjects = append(subjects, groups...)
	for _, sub := range subjects {
		if sub == "" {
			continue
		}
		rules, err := e.casbin.GetImplicitPermissionsForUser(sub)
		if err != nil {
			continue
		}
		for _, r := range rules {
			if len(r) != 5 {
				continue
			}
			k := [5]string(r)
			if seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, Rule{Subject: r[0], Resource: r[1], Action: r[2], Object: r[3], Effect: Effect(r[4])})
		}
	}
	return out
}
