package actions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/controller/health"
)

// Action is one action an object offers, as discovery reports it.
type Action struct {
	Name string `json:"name"`
	// Disabled actions are listed but cannot run on the object as it is
	// (resume on a Deployment that is not paused).
	Disabled    bool    `json:"disabled"`
	IconClass   string  `json:"iconClass,omitempty"`
	DisplayName string  `json:"displayName,omitempty"`
	Params      []Param `json:"params,omitempty"`
}

// Param is a parameter an action takes. Values always reach the action as
// strings; Type says what they must read as.
type Param struct {
	Name string `json:"name"`
	// Type is one of ParamString (the default), ParamNumber,
	// ParamInteger and ParamBoolean.
	Type    string `json:"type,omitempty"`
	Default string `json:"default,omitempty"`
}

// Parameter types.
const (
	ParamString  = "string"
	ParamNumber  = "number"
	ParamInteger = "integer"
	ParamBoolean = "boolean"
)

// Operation is what a change does to the cluster.
type Operation string

// Operations of a Change.
const (
	// OperationPatch changes the object the action ran on.
	OperationPatch Operation = "patch"
	// OperationCreate creates a new object.
	OperationCreate Operation = "create"
)

// Change is one object an action would write.
type Change struct {
	Operation Operation `json:"operation"`
	// Object is the object as the action would leave it (create: as it
	// would be created).
	Object *unstructured.Unstructured `json:"object"`
	// Patch, for OperationPatch, is the JSON merge patch (RFC 7386) from
	// the object as it was to Object.
	Patch json.RawMessage `json:"patch,omitempty"`
}

// Custom is one kind's custom actions in Argo CD's form.
type Custom struct {
	// Group is the API group ("" for the core group); Kind the kind.
	// Both are exact: actions take no wildcards.
	Group, Kind string
	// Discovery returns a table of the actions available on obj, keyed by
	// name: {disabled, iconClass, displayName, params}.
	Discovery string
	// Definitions hold each action's script, by name.
	Definitions []Definition
	// MergeBuiltin keeps the kind's built-in actions next to these (a
	// custom action wins over a built-in one of the same name); without
	// it these replace the built-in ones.
	MergeBuiltin bool
	// UseOpenLibs gives the scripts the open libraries, as for health
	// checks of the kind.
	UseOpenLibs bool
}

// Definition is the script of one custom action.
type Definition struct {
	Name, Script string
}

// Options configure an Engine.
type Options struct {
	// Custom are the custom actions, one entry per group/kind.
	Custom []Custom
	// Lua runs the scripts: its sandbox, limits and pooled states. Nil
	// makes one with Timeout and MemoryBudget.
	Lua *health.Engine
	// Timeout and MemoryBudget bound one run of a script when Lua is nil;
	// zero means the health engine's defaults.
	Timeout      time.Duration
	MemoryBudget int64
	// ClusterScoped tells whether a group/kind is cluster-scoped, to keep
	// an action of a namespaced object from creating cluster-scoped ones.
	// With nil, no action may create an object.
	ClusterScoped func(group, kind string) bool
	// Now is the clock of the built-in actions (restart's timestamp,
	// create-job's name); nil means time.Now.
	Now func() time.Time
}

// Engine discovers and runs resource actions. Make one with New; it is
// safe for concurrent use.
type Engine struct {
	lua           *health.Engine
	custom        map[groupKind]*customKind
	clusterScoped func(group, kind string) bool
	now           func() time.Time
}

// customKind is a Custom compiled once.
type customKind struct {
	discovery *health.Script
	actions   map[string]*health.Script
	merge     bool
	builtin   *builtinKind // the kind's built-in actions, when merged
}

// groupKind names a kind without version.
type groupKind struct{ group, kind string }

func (gk groupKind) String() string {
	if gk.group == "" {
		return gk.kind
	}
	return gk.group + "/" + gk.kind
}

// Errors of Run, to tell a caller's mistake from a script's.
var (
	// ErrNoAction: the object offers no action of that name.
	ErrNoAction = errors.New("no such action")
	// ErrDisabled: discovery lists the action as disabled for the object
	// as it is.
	ErrDisabled = errors.New("action is disabled")
	// ErrBadParam: a parameter is unknown, of the wrong type or too long.
	ErrBadParam = errors.New("invalid action parameter")
	// ErrBadResult: a script returned something that is not a valid
	// action or change; the message says what and why.
	ErrBadResult = errors.New("invalid action result")
)

// New compiles every custom script. It fails on a syntax error (naming the
// kind, the action and the line), on a kind given twice, on a wildcard
// group or kind, and on an action name that is not valid.
func New(opts Options) (*Engine, error) {
	e := &Engine{lua: opts.Lua, clusterScoped: opts.ClusterScoped, now: opts.Now, custom: map[groupKind]*customKind{}}
	if e.lua == nil {
		var err error
		if e.lua, err = health.New(health.Options{Timeout: opts.Timeout, MemoryBudget: opts.MemoryBudget}); err != nil {
			return nil, err
		}
	}
	if e.now == nil {
		e.now = time.Now
	}
	for _, c := range opts.Custom {
		gk := groupKind{c.Group, c.Kind}
		switch {
		case c.Kind == "":
			return nil, fmt.Errorf("actions for group %q: kind is empty", c.Group)
		case strings.Contains(c.Group+c.Kind, "*"):
			return nil, fmt.Errorf("actions for %s: actions take an exact group and kind, not a wildcard", gk)
		case e.custom[gk] != nil:
			return nil, fmt.Errorf("actions for %s: defined twice", gk)
		}
		ck, err := compileCustom(gk, c)
		if err != nil {
			return nil, err
		}
		e.custom[gk] = ck
	}
	return e, nil
}

// WithScope returns an engine like e whose creates are checked against
// scope instead of Options.ClusterScoped: one engine serves every
// destination cluster, each with its own kinds. It shares e's scripts
// and Lua states and costs one small allocation.
func (e *Engine) WithScope(scope func(group, kind string) bool) *Engine {
	c := *e
	c.clusterScoped = scope
	return &c
}

func compileCustom(gk groupKind, c Custom) (*customKind, error) {
	disc, err := health.CompileScript(fmt.Sprintf("discovery(%s)", gk), c.Discovery, c.UseOpenLibs)
	if err != nil {
		return nil, fmt.Errorf("actions for %s: discovery.lua: %w", gk, err)
	}
	ck := &customKind{discovery: disc, actions: make(map[string]*health.Script, len(c.Definitions)), merge: c.MergeBuiltin}
	if c.MergeBuiltin {
		ck.builtin = builtins[gk]
	}
	for _, d := range c.Definitions {
		if err := checkName("action", d.Name); err != nil {
			return nil, fmt.Errorf("actions for %s: %w", gk, err)
		}
		if ck.actions[d.Name] != nil {
			return nil, fmt.Errorf("actions for %s: action %q defined twice", gk, d.Name)
		}
		s, err := health.CompileScript(fmt.Sprintf("action(%s %s)", gk, d.Name), d.Script, c.UseOpenLibs)
		if err != nil {
			return nil, fmt.Errorf("actions for %s: %s action.lua: %w", gk, d.Name, err)
		}
		ck.actions[d.Name] = s
	}
	return ck, nil
}

// Discover returns the actions obj offers, sorted by name: the custom
// ones of its kind, then (unless custom ones replace them) the built-in
// ones whose names the custom ones do not take. An object of a kind with
// no actions offers none. The error wraps a *health.ScriptError when the
// discovery script failed, ErrBadResult when it returned something that
// is not a table of actions.
func (e *Engine) Discover(ctx context.Context, obj *unstructured.Unstructured) ([]Action, error) {
	if obj == nil || obj.Object == nil {
		return nil, errors.New("actions: nil object")
	}
	gk := objectGroupKind(obj)
	var out []Action
	ck := e.custom[gk]
	if ck != nil {
		v, err := e.lua.RunScript(ctx, ck.discovery, map[string]any{"obj": obj.Object})
		if err != nil {
			return nil, fmt.Errorf("discover actions of %s: %w", gk, err)
		}
		if out, err = discoveredActions(v, ck); err != nil {
			return nil, fmt.Errorf("discover actions of %s: %w", gk, err)
		}
	}
	if b := builtins[gk]; b != nil && (ck == nil || ck.merge) {
		found, err := discoverBuiltin(b, obj)
		if err != nil {
			return nil, fmt.Errorf("discover actions of %s: %w", gk, err)
		}
		for _, a := range found {
			if !slices.ContainsFunc(out, func(c Action) bool { return c.Name == a.Name }) {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b Action) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Run runs the action name on obj with params and returns the changes it
// would write, in the order the action gave them; it writes nothing.
//
// The action must be one Discover lists for obj, and not disabled.
// Parameters must be ones the action declares, of their type; declared
// ones left out take their default. The changes are checked: a patch may
// only change obj itself (its group, kind, namespace and name), a create
// must name its object and stay in obj's namespace, and never create a
// cluster-scoped object from a namespaced one.
func (e *Engine) Run(ctx context.Context, obj *unstructured.Unstructured, name string, params map[string]string) ([]Change, error) {
	available, err := e.Discover(ctx, obj)
	if err != nil {
		return nil, err
	}
	gk := objectGroupKind(obj)
	i := slices.IndexFunc(available, func(a Action) bool { return a.Name == name })
	if i < 0 {
		names := make([]string, 0, len(available))
		for _, a := range available {
			names = append(names, a.Name)
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%w %q: %s has no actions", ErrNoAction, name, gk)
		}
		return nil, fmt.Errorf("%w %q for %s; it offers: %s", ErrNoAction, name, gk, strings.Join(names, ", "))
	}
	action := available[i]
	if action.Disabled {
		return nil, fmt.Errorf("%w: %q on %s %s", ErrDisabled, name, gk, objectRef(obj))
	}
	values, err := checkParams(action, params)
	if err != nil {
		return nil, err
	}
	var result any
	if ck := e.custom[gk]; ck != nil && ck.actions[name] != nil {
		args := make(map[string]any, len(values))
		for k, v := range values {
			args[k] = v
		}
		result, err = e.lua.RunScript(ctx, ck.actions[name], map[string]any{"obj": obj.Object, "actionParams": args})
	} else {
		result, err = runBuiltin(builtins[gk].run[name], obj, values, e.now())
	}
	if err != nil {
		return nil, fmt.Errorf("run action %q on %s %s: %w", name, gk, objectRef(obj), err)
	}
	changes, err := e.changes(obj, result)
	if err != nil {
		return nil, fmt.Errorf("run action %q on %s %s: %w", name, gk, objectRef(obj), err)
	}
	return changes, nil
}

// discoverBuiltin lists a kind's built-in actions for obj; a panic on an
// object of an unexpected shape becomes an error.
func discoverBuiltin(b *builtinKind, obj *unstructured.Unstructured) (found []Action, err error) {
	defer func() {
		if r := recover(); r != nil {
			found, err = nil, fmt.Errorf("the built-in discovery failed on this object: %v", r)
		}
	}()
	return b.discover(obj.Object), nil
}

// runBuiltin runs a built-in action on a copy of obj; a panic on an object
// of an unexpected shape becomes an error.
func runBuiltin(run builtinAction, obj *unstructured.Unstructured, params map[string]string, now time.Time) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("the built-in action failed on this object: %v", r)
		}
	}()
	return run(obj.DeepCopy().Object, params, now)
}

// objectGroupKind reads the API group from apiVersion ("apps/v1" -> "apps",
// "v1" -> "").
func objectGroupKind(obj *unstructured.Unstructured) groupKind {
	gvk := obj.GroupVersionKind()
	return groupKind{group: gvk.Group, kind: gvk.Kind}
}

// objectRef is "namespace/name", or "name" for a cluster-scoped object.
func objectRef(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}
