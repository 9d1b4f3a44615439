package diff

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CompareOptionsAnnotation is Argo CD's per-object compare options
// annotation: a comma-separated list such as
// "IgnoreExtraneous,ServerSideDiff=true".
const CompareOptionsAnnotation = "argocd.argoproj.io/compare-options"

// ObjectCompareOptions are the compare options an object asks for.
type ObjectCompareOptions struct {
	// IgnoreExtraneous: the object does not make the application out of
	// sync when it has no desired counterpart.
	IgnoreExtraneous bool
	// ServerSideDiff is non-nil when the object sets ServerSideDiff=true
	// or =false, overriding the application's diff strategy.
	ServerSideDiff *bool
	// IncludeMutationWebhook: server-side diff keeps changes that
	// mutating webhooks make in the dry run.
	IncludeMutationWebhook bool
}

// Compare parses obj's compare-options annotation. Unknown options are
// ignored, as Argo CD does; a nil obj has none.
func Compare(obj *unstructured.Unstructured) ObjectCompareOptions {
	if obj == nil {
		return ObjectCompareOptions{}
	}
	meta, _ := obj.Object["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	s, _ := ann[CompareOptionsAnnotation].(string)
	return ParseCompareOptions(s)
}

// ParseCompareOptions parses the value of a compare-options annotation,
// such as "IgnoreExtraneous,ServerSideDiff=true", of an object or an
// Application.
func ParseCompareOptions(s string) ObjectCompareOptions {
	var out ObjectCompareOptions
	for opt := range strings.SplitSeq(s, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		on := !hasVal || strings.EqualFold(val, "true")
		switch name {
		case "IgnoreExtraneous":
			out.IgnoreExtraneous = on
		case "ServerSideDiff":
			if hasVal {
				b := on
				out.ServerSideDiff = &b
			}
		case "IncludeMutationWebhook":
			out.IncludeMutationWebhook = on
		}
	}
	return out
}

// CompareOptions is the short form of Compare for callers that only need
// the two switches Diff acts on.
func CompareOptions(obj *unstructured.Unstructured) (ignoreExtraneous, serverSideDiff bool) {
	o := Compare(obj)
	return o.IgnoreExtraneous, o.ServerSideDiff != nil && *o.ServerSideDiff
}
