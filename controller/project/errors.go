package project

import (
	"fmt"
	"strings"
)

// DeniedError is returned by a check the project does not pass. Its
// message says what was refused and by which project, in the words Argo CD
// uses, and is safe to show users: repository URLs in it have their
// credentials removed.
type DeniedError struct {
	// Project is the name of the project that refused.
	Project string
	// Message is the reason, for conditions, events and API errors.
	Message string
}

// Error returns the reason.
func (e *DeniedError) Error() string { return e.Message }

func denied(project, format string, args ...any) error {
	return &DeniedError{Project: project, Message: fmt.Sprintf(format, args...)}
}

// InvalidError is returned by Validate and Compile for a project spec that
// cannot be enforced as written: a malformed glob, sync window or kind. A
// project in this state permits nothing, so the problem is visible instead
// of silently widening or narrowing what the project allows.
type InvalidError struct {
	// Project is the project's name; empty when Validate was given only a
	// spec.
	Project string
	// Problems are the individual problems, each naming its field, such as
	// `spec.syncWindows[0].schedule: ...`.
	Problems []string
}

// Error lists every problem.
func (e *InvalidError) Error() string {
	var b strings.Builder
	if e.Project != "" {
		fmt.Fprintf(&b, "project '%s' is invalid: ", e.Project)
	} else {
		b.WriteString("invalid project: ")
	}
	b.WriteString(strings.Join(e.Problems, "; "))
	return b.String()
}

// problems collects validation problems while a spec is compiled.
type problems struct{ list []string }

func (p *problems) addf(field, format string, args ...any) {
	p.list = append(p.list, field+": "+fmt.Sprintf(format, args...))
}

func (p *problems) err(project string) error {
	if len(p.list) == 0 {
		return nil
	}
	return &InvalidError{Project: project, Problems: p.list}
}
