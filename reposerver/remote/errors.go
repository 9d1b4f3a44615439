package remote

import (
	"context"
	"errors"
	"os"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/graphcd/graphcd/internal/repourl"
	"github.com/graphcd/graphcd/reposerver"
	"github.com/graphcd/graphcd/reposerver/git"
	"github.com/graphcd/graphcd/reposerver/render"
)

// errorDomain marks the ErrorInfo details this package writes.
const errorDomain = "reposerver.graphcd.io"

// reasonUnknown marks a Service error that matched no known class: the
// message is the Service's, the code is Unknown.
const reasonUnknown = "UNKNOWN"

// errorClass ties a sentinel error to the status code and reason it
// crosses the wire with.
type errorClass struct {
	sentinel error
	code     codes.Code
	reason   string
}

// errorClasses are checked in order; the first sentinel err matches wins.
var errorClasses = []errorClass{
	{context.DeadlineExceeded, codes.DeadlineExceeded, "DEADLINE_EXCEEDED"},
	{context.Canceled, codes.Canceled, "CANCELED"},
	{git.ErrAuthentication, codes.Unauthenticated, "AUTHENTICATION_FAILED"},
	{git.ErrRevisionNotFound, codes.NotFound, "REVISION_NOT_FOUND"},
	{git.ErrInvalidRevision, codes.InvalidArgument, "INVALID_REVISION"},
	{git.ErrUnsafeURL, codes.InvalidArgument, "UNSAFE_URL"},
	{git.ErrNoKnownHosts, codes.FailedPrecondition, "NO_KNOWN_HOSTS"},
	{git.ErrUnsigned, codes.FailedPrecondition, "COMMIT_UNSIGNED"},
	{git.ErrSignatureInvalid, codes.FailedPrecondition, "SIGNATURE_INVALID"},
	{reposerver.ErrNotGit, codes.FailedPrecondition, "NOT_GIT"},
	{render.ErrOutsideRoot, codes.InvalidArgument, "PATH_OUTSIDE_ROOT"},
	{render.ErrTooLarge, codes.ResourceExhausted, "MANIFESTS_TOO_LARGE"},
	{render.ErrBudgetExceeded, codes.ResourceExhausted, "RENDER_BUDGET_EXCEEDED"},
	{os.ErrNotExist, codes.NotFound, "NOT_FOUND"},
}

// reasonReposNeeded marks a *reposerver.RepositoriesNeededError; its
// repositories travel in the ErrorInfo's metadata, under reposKey, one per
// line.
const (
	reasonReposNeeded = "REPOSITORIES_NEEDED"
	reposKey          = "repositories"
)

// toStatus turns a Service error into a gRPC status error. The message is
// the Service's (already redacted), scrubbed once more of the request's
// secrets and of any URL userinfo.
func toStatus(err error, creds *reposerver.Credentials) error {
	code, reason := codes.Unknown, reasonUnknown
	for _, c := range errorClasses {
		if errors.Is(err, c.sentinel) {
			code, reason = c.code, c.reason
			break
		}
	}
	info := &errdetails.ErrorInfo{Reason: reason, Domain: errorDomain}
	var needed *reposerver.RepositoriesNeededError
	if errors.As(err, &needed) {
		code, info.Reason = codes.FailedPrecondition, reasonReposNeeded
		info.Metadata = map[string]string{reposKey: strings.Join(needed.URLs, "\n")}
	}
	st := status.New(code, scrubMessage(err.Error(), creds))
	if withInfo, derr := st.WithDetails(info); derr == nil {
		st = withInfo
	}
	return st.Err()
}

// scrubMessage removes URL userinfo and every secret of creds from msg.
func scrubMessage(msg string, creds *reposerver.Credentials) string {
	msg = repourl.Redact(msg)
	if creds == nil {
		return msg
	}
	for _, s := range []string{creds.Username + ":" + creds.Password, creds.Password, creds.BearerToken, string(creds.SSHPrivateKey), string(creds.TLSClientKey)} {
		if len(s) >= 3 {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return msg
}

// Error is an error returned by the repo server or by the gRPC transport.
// Its message is the server's; errors.Is matches the sentinel the server
// classified it as (git.ErrRevisionNotFound, context.DeadlineExceeded, ...),
// and status.Code reports its gRPC code.
type Error struct {
	st       *status.Status
	sentinel error
	msg      string
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the sentinel the error was classified as, if any.
func (e *Error) Unwrap() error { return e.sentinel }

// GRPCStatus lets status.Code and status.FromError see the status.
func (e *Error) GRPCStatus() *status.Status { return e.st }

// Code is the gRPC status code.
func (e *Error) Code() codes.Code { return e.st.Code() }

// fromStatus turns the error of a call into an *Error. Errors the server's
// handlers wrote keep their message; errors of the transport (unreachable
// server, TLS failure, message too large) are prefixed with the address.
func fromStatus(err error, addr string) error {
	if err == nil {
		return nil
	}
	st := status.Convert(err)
	reason, remote := "", false
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			reason, remote = info.GetReason(), true
			if reason == reasonReposNeeded {
				return &reposerver.RepositoriesNeededError{URLs: strings.Split(info.GetMetadata()[reposKey], "\n")}
			}
			break
		}
	}
	e := &Error{st: st, msg: st.Message()}
	if !remote {
		e.msg = "repo server " + addr + ": " + st.Message()
	}
	for _, c := range errorClasses {
		if (remote && c.reason == reason) || (!remote && c.code == st.Code() && isContextCode(c.code)) {
			e.sentinel = c.sentinel
			break
		}
	}
	return e
}

func isContextCode(c codes.Code) bool { return c == codes.DeadlineExceeded || c == codes.Canceled }
