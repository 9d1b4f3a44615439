package main

import (
	"fmt"
	"slices"
	"strings"
)

// enumValue is a string flag restricted to a fixed set of values, so a
// typo fails at parse time with the choices listed.
type enumValue struct {
	value   string
	allowed []string
}

func newEnum(def string, allowed ...string) *enumValue {
	return &enumValue{value: def, allowed: allowed}
}

func (e *enumValue) String() string { return e.value }
func (e *enumValue) Type() string   { return "string" }

func (e *enumValue) Set(s string) error {
	if !slices.Contains(e.allowed, s) {
		return fmt.Errorf("must be one of %s", strings.Join(e.allowed, ", "))
	}
	e.value = s
	return nil
}
