// Package kubeerror strips object content from the Kubernetes API's
// errors before they reach a client, a condition, an event or a log.
//
// The API server echoes the values it refuses: a Secret patched into an
// invalid shape comes back as `Secret "db" is invalid: data: Invalid value:
// map[string]interface {}{"password":...}`. Wrap makes a client
// configuration redact every error answer before client-go reads it. What
// the answer says about the request stays — the reason and code (so
// apierrors.IsInvalid and its siblings answer as before), the kind, the
// name, which field and what kind of problem — and the values go. One
// place covers every client built from the configuration: syncs, prunes,
// hooks, the cluster cache and the API's resource mutations.
package kubeerror

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// maxMessage bounds a free-form message kept as the API server wrote it.
const maxMessage = 1024

// maxStatusBody bounds how much of an error answer is read to redact it;
// the API server's Status answers are a few KiB at most.
const maxStatusBody = 1 << 20

// Wrap makes every client built from cfg receive the API server's error
// answers redacted.
func Wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return transport{next: rt} })
}

// transport redacts the Status of every error answer before client-go
// turns it into an error; an error answer that is not a Status (a proxy's
// page, say, which client-go would quote) loses its body.
type transport struct{ next http.RoundTripper }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < http.StatusBadRequest {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStatusBody+1))
	_ = resp.Body.Close()
	var status metav1.Status
	if err == nil && len(body) <= maxStatusBody && json.Unmarshal(body, &status) == nil && status.Kind == "Status" {
		body, err = json.Marshal(redactStatus(status))
	} else {
		body, err = nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("redact the answer of %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	resp.Header.Del("Content-Encoding")
	return resp, nil
}

// valueCauses are the cause types whose message starts with the value the
// API server refused (a field error's "Invalid value: <value>: detail"),
// with the words that stay.
var valueCauses = map[metav1.CauseType]string{
	metav1.CauseTypeFieldValueInvalid:      "Invalid value",
	metav1.CauseTypeTypeInvalid:            "Invalid value",
	metav1.CauseTypeFieldValueNotSupported: "Unsupported value",
	metav1.CauseTypeFieldValueNotFound:     "Not found",
	metav1.CauseTypeFieldValueDuplicate:    "Duplicate value",
	metav1.CauseTypeTooMany:                "Too many",
}

// knownDetails are the explanations of the API server's validation that
// users need most; a redacted cause keeps one it ends with. Only these
// fixed words are kept, never text of the message itself, since a value
// may contain anything.
var knownDetails = []string{
	"field is immutable",
	"may not be changed",
	"must be unique",
	"must be no more than 63 characters",
	"must be no more than 253 characters",
}

// knownDetail returns ": <detail>" when msg ends with a known detail.
func knownDetail(msg string) string {
	for _, d := range knownDetails {
		if strings.HasSuffix(msg, ": "+d) {
			return ": " + d
		}
	}
	return ""
}

// namesOnly are the reasons whose messages the API server builds from
// names, never from an object's content.
var namesOnly = map[metav1.StatusReason]bool{
	metav1.StatusReasonNotFound: true, metav1.StatusReasonAlreadyExists: true, metav1.StatusReasonConflict: true,
	metav1.StatusReasonGone: true, metav1.StatusReasonExpired: true, metav1.StatusReasonUnauthorized: true,
	metav1.StatusReasonForbidden: true, metav1.StatusReasonTimeout: true, metav1.StatusReasonServerTimeout: true,
	metav1.StatusReasonTooManyRequests: true, metav1.StatusReasonMethodNotAllowed: true, metav1.StatusReasonNotAcceptable: true,
	metav1.StatusReasonUnsupportedMediaType: true, metav1.StatusReasonRequestEntityTooLarge: true,
	metav1.StatusReasonServiceUnavailable: true,
}

// redactStatus returns s without the values its message and causes quote.
func redactStatus(s metav1.Status) metav1.Status {
	out := s
	if s.Details != nil {
		d := *s.Details
		d.Causes = make([]metav1.StatusCause, len(s.Details.Causes))
		for i, c := range s.Details.Causes {
			if word, ok := valueCauses[c.Type]; ok {
				c.Message = word + " (value not shown)" + knownDetail(c.Message)
			} else {
				c.Message = cutValues(c.Message)
			}
			d.Causes[i] = c
		}
		out.Details = &d
	}
	switch {
	case s.Reason == metav1.StatusReasonInvalid && out.Details != nil && len(out.Details.Causes) > 0:
		out.Message = invalidMessage(out)
	case namesOnly[s.Reason]:
	default:
		out.Message = cutValues(s.Message)
	}
	return out
}

// invalidMessage rebuilds the API server's `<Kind> "<name>" is invalid:
// <causes>` from the redacted causes; s has at least one.
func invalidMessage(s metav1.Status) string {
	what := "the object"
	if d := s.Details; d.Kind != "" {
		kind := d.Kind
		if d.Group != "" {
			kind += "." + d.Group
		}
		what = fmt.Sprintf("%s %q", kind, d.Name)
	}
	parts := make([]string, len(s.Details.Causes))
	for i, c := range s.Details.Causes {
		parts[i] = c.Message
		if c.Field != "" {
			parts[i] = c.Field + ": " + c.Message
		}
	}
	if len(parts) == 1 {
		return what + " is invalid: " + parts[0]
	}
	return what + " is invalid: [" + strings.Join(parts, ", ") + "]"
}

// valueMarks start the values the API server quotes in free-form
// messages (bad requests, server errors, admission webhooks' answers).
var valueMarks = []string{"Invalid value:", "Unsupported value:", "Duplicate value:", "Not found:", "Too many:"}

// cutValues keeps msg up to the first value it quotes, and at most
// maxMessage bytes.
func cutValues(msg string) string {
	cut := -1
	for _, m := range valueMarks {
		if i := strings.Index(msg, m); i >= 0 && (cut < 0 || i+len(m) < cut) {
			cut = i + len(m)
		}
	}
	if cut >= 0 {
		return strings.TrimSuffix(msg[:cut], ":") + " (value not shown)"
	}
	if len(msg) > maxMessage {
		return msg[:maxMessage] + "..."
	}
	return msg
}
