// Package actioncfg keeps the API's resource actions engine in step with
// graphcd-cm: the built-in actions and those of
// resource.customizations.actions, compiled once per change of the
// settings (catalog.Settings hands each change to Update).
package actioncfg

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/graphcd/graphcd/controller/actions"
	"github.com/graphcd/graphcd/controller/engineopts"
	"github.com/graphcd/graphcd/internal/settings"
)

// Source is the current engine. The zero value serves the built-in
// actions; it is safe for concurrent use.
type Source struct {
	// Logger, when set, hears why the custom actions are left out, once
	// per change.
	Logger *slog.Logger
	cur    atomic.Pointer[compiled]
}

type compiled struct {
	engine *actions.Engine
	err    error
}

// Update compiles the actions of graphcd-cm's data (nil: none). When the
// settings or a custom script do not compile, the built-in actions still
// run and Actions says why the custom ones are missing.
func (s *Source) Update(data map[string]string) {
	c := &compiled{engine: builtin()}
	if parsed, err := settings.Parse(data); err != nil {
		c.err = err
	} else if custom := engineopts.Actions(parsed); len(custom) > 0 {
		if e, err := actions.New(actions.Options{Custom: custom}); err != nil {
			c.err = err
		} else {
			c.engine = e
		}
	}
	s.cur.Store(c)
	if c.err != nil && s.Logger != nil {
		s.Logger.Warn("graphcd-cm: custom resource actions are left out; the built-in ones still run", "err", c.err)
	}
}

// Actions is the engine (the built-in actions before any Update), and
// why its custom actions are left out when they are. The engine has no
// cluster scope: callers give each destination's with WithScope.
func (s *Source) Actions() (*actions.Engine, error) {
	if c := s.cur.Load(); c != nil {
		return c.engine, c.err
	}
	return builtin(), nil
}

// builtin is the engine of the built-in actions alone. It cannot fail.
var builtin = sync.OnceValue(func() *actions.Engine {
	e, err := actions.New(actions.Options{})
	if err != nil {
		panic(err)
	}
	return e
})
