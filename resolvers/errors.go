package resolvers

import (
	"errors"
	"fmt"

	"github.com/graphcd/graphcd/apiserver/appops"
)

// Code classifies an error for API clients. It is sent as extensions.code and
// never changes for a given kind of failure, so clients can branch on it.
type Code string

// The codes clients may see.
const (
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeForbidden       Code = "FORBIDDEN"
	CodeNotFound        Code = "NOT_FOUND"
	CodeBadUserInput    Code = "BAD_USER_INPUT"
	CodeConflict        Code = "CONFLICT"
	CodeInternal        Code = "INTERNAL"
)

// Error is an error whose Message is safe to show to API clients. Any other
// error returned by a resolver is replaced by "internal error" before it
// leaves the server, so wrap only what a user may read. Err, if set, is the
// cause; it is logged but never sent.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Errorf returns an *Error with the given code and a formatted message.
// Arguments are formatted with %v semantics; %w is not supported because the
// message is for users and the cause belongs in Err.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Error returns the user-facing message followed by the cause, for logs.
func (e *Error) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return e.Message + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// invalidInput returns err as BAD_USER_INPUT when a service says the
// request is invalid, and err otherwise.
func invalidInput(err error) error {
	if inv, ok := errors.AsType[*appops.InvalidError](err); ok {
		return Errorf(CodeBadUserInput, "%s", inv.Msg)
	}
	return err
}
