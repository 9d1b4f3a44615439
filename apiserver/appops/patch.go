package appops

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// InvalidError is a request the client must change; its message says
// what is wrong and may be shown to the client.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, a ...any) error { return &InvalidError{Msg: fmt.Sprintf(format, a...)} }

// MaxPatch bounds an application patch.
const MaxPatch = 256 << 10

// PatchType says how a Patch reads its document.
type PatchType int

// The patch types an Application takes.
const (
	// MergePatch is a JSON merge patch (RFC 7386).
	MergePatch PatchType = iota
	// JSONPatch is a JSON patch (RFC 6902).
	JSONPatch
)

// Patch changes an Application's labels, annotations and spec, and
// nothing else of it.
type Patch struct {
	apply func(doc []byte) ([]byte, error)
}

// patchable is the part of an Application a patch may change.
type patchable struct {
	Metadata struct {
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec v1alpha1.ApplicationSpec `json:"spec"`
}

// NewPatch reads doc as a patch of type t; an *InvalidError says what is
// wrong with it.
func NewPatch(t PatchType, doc string) (Patch, error) {
	if len(doc) > MaxPatch {
		return Patch{}, invalid("patch: larger than %d KiB", MaxPatch>>10)
	}
	if t == MergePatch {
		return Patch{apply: func(cur []byte) ([]byte, error) { return jsonpatch.MergePatch(cur, []byte(doc)) }}, nil
	}
	p, err := jsonpatch.DecodePatch([]byte(doc))
	if err != nil {
		return Patch{}, invalid("patch: %v", err)
	}
	// Each "copy" may copy what earlier ones copied: unbounded, forty of
	// them would double the document forty times.
	opts := jsonpatch.NewApplyOptions()
	opts.AccumulatedCopySizeLimit = MaxPatch
	return Patch{apply: func(cur []byte) ([]byte, error) { return p.ApplyWithOptions(cur, opts) }}, nil
}

// Apply returns app as the patch makes it: its labels, annotations and
// spec patched, the rest shared with app, which is not changed. An
// *InvalidError says why the patch does not apply.
func (p Patch) Apply(app *v1alpha1.Application) (*v1alpha1.Application, error) {
	var view patchable
	view.Metadata.Labels, view.Metadata.Annotations, view.Spec = app.Labels, app.Annotations, app.Spec
	doc, err := json.Marshal(view)
	if err != nil {
		return nil, err
	}
	patched, err := p.apply(doc)
	if err != nil {
		return nil, invalid("patch: %v", err)
	}
	var next patchable
	if err := yaml.UnmarshalStrict(patched, &next); err != nil {
		return nil, invalid("patch: the result is not a valid application (only metadata.labels, metadata.annotations and spec may change): %v", err)
	}
	if err := checkSyncApproval(next.Spec.SyncApproval); err != nil {
		return nil, err
	}
	out := *app
	out.Labels, out.Annotations, out.Spec = next.Metadata.Labels, next.Metadata.Annotations, next.Spec
	return &out, nil
}
