package command

import (
	"fmt"
	"slices"
	"strings"
)

// Enum is a string flag restricted to a fixed set of values, so a typo
// fails at parse time with the choices listed.
type Enum struct {
	value   string
	allowed []string
}

// NewEnum returns an Enum of the allowed values, set to def.
func NewEnum(def string, allowed ...string) *Enum {
	return &Enum{value: def, allowed: allowed}
}

// Allowed lists the values the flag accepts, for its help text.
func (e *Enum) Allowed() []string { return e.allowed }

func (e *Enum) String() string { return e.value }

// Type names the flag's type in help texts.
func (e *Enum) Type() string { return "string" }

// Set accepts one of the allowed values.
func (e *Enum) Set(s string) error {
	if !slices.Contains(e.allowed, s) {
		return fmt.Errorf("must be one of %s", strings.Join(e.allowed, ", "))
	}
	e.value = s
	return nil
}
