package audit

import (
	"context"
	"encoding/json"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/graphcd/graphcd/auth"
)

// Recorder collects what one mutation did: the object it changed, before
// and after, and the RBAC object it was authorized (or refused) for.
// Make it with Begin; it is safe for concurrent use.
type Recorder struct {
	mu sync.Mutex
	// object is the first object changed; before and after its JSON
	// (nil where it did not exist).
	object        *Object
	before, after []byte
	changed       bool
	// target is the RBAC object of the mutation, refused when denied.
	target       *Object
	targetDenied bool
}

type recorderKey struct{}

// Begin returns ctx carrying a new Recorder, and the Recorder.
func Begin(ctx context.Context) (context.Context, *Recorder) {
	r := &Recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r
}

// Recording reports whether ctx carries a Recorder: a writer that reads
// an object only for the audit trail's patch skips the read without one.
func Recording(ctx context.Context) bool { return from(ctx) != nil }

func from(ctx context.Context) *Recorder {
	r, _ := ctx.Value(recorderKey{}).(*Recorder)
	return r
}

// Change reports a write of obj: before is the object as read for the
// write, after as written (nil before for a create, nil after for a
// delete). The first object changed is the entry's; further writes of it
// extend the change (its first before, its last after), writes of other
// objects are not recorded. Without a Recorder in ctx it does nothing.
func Change(ctx context.Context, before, after any) {
	r := from(ctx)
	if r == nil {
		return
	}
	ref := before
	if isNil(ref) { // a typed nil too: an object that could not be read
		ref = after
	}
	o, ok := objectOf(ref)
	if !ok {
		return
	}
	if a, ok := objectOf(after); ok && a.Project != "" {
		o.Project = a.Project // an update may move an app to another project
	}
	b, errB := toJSON(before)
	a, errA := toJSON(after)
	if errB != nil || errA != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.object != nil && !sameObject(*r.object, o) {
		return
	}
	if r.object == nil {
		r.object = &o
	} else if o.Project != "" {
		r.object.Project = o.Project
	}
	if !r.changed {
		r.before = b // the object as first read for a write (Touch keeps none)
	}
	if o.UID != "" {
		r.object.UID = o.UID
	}
	r.after, r.changed = a, true
}

// Touch reports that the mutation acted on obj without writing it (it
// read it and refused, say); a later Change of another object wins. Without a
// Recorder in ctx it does nothing.
func Touch(ctx context.Context, obj any) {
	r := from(ctx)
	if r == nil {
		return
	}
	o, ok := objectOf(obj)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.object == nil {
		r.object = &o
	}
}

// Authorized reports an RBAC decision of the mutation about o: its Kind
// the RBAC resource ("applications"), its Project, Namespace and Name as
// the caller of the check knows them, and whether it was allowed. A
// refusal is kept over any later decision. Without a Recorder in ctx it
// does nothing.
func Authorized(ctx context.Context, o Object, allowed bool) {
	r := from(ctx)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.targetDenied {
		return
	}
	r.target, r.targetDenied = &o, !allowed
}

// Call is what the API knows of a mutation besides its Recorder.
type Call struct {
	Time      time.Time
	Principal auth.Principal
	Client    string
	Operation string
	Field     string
	// ErrorCode is the code of the mutation's error; empty on success.
	ErrorCode string
}

// MaxPatchBytes bounds an entry's patch; a larger one is left out
// (Entry.PatchOmitted).
const MaxPatchBytes = 64 << 10

// maxName bounds the client-chosen strings of an entry.
const maxName = 256

// Entry returns the entry of the mutation c recorded by r.
func (r *Recorder) Entry(c Call) Entry {
	e := Entry{
		Time: c.Time.UTC(), User: clip(c.Principal.Subject), Groups: c.Principal.Groups,
		Client: c.Client, Operation: clip(c.Operation), Field: clip(c.Field),
		Outcome: Success, ErrorCode: c.ErrorCode,
	}
	if e.User == "" {
		e.User = "anonymous"
	}
	if c.ErrorCode != "" {
		e.Outcome = Failure
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.object != nil && (!r.targetDenied || r.changed):
		e.Object = *r.object
		if e.Object.Project == "" && r.target != nil {
			e.Object.Project = r.target.Project
		}
	case r.target != nil:
		e.Object = *r.target
	}
	o := &e.Object
	o.Kind, o.Group, o.Namespace, o.Name, o.Project = clip(o.Kind), clip(o.Group), clip(o.Namespace), clip(o.Name), clip(o.Project)
	if r.changed {
		p, err := diff(e.Object.Kind, r.before, r.after)
		switch {
		case err != nil:
			e.PatchOmitted = true
		case len(p) > MaxPatchBytes:
			e.PatchOmitted = true
		default:
			e.Patch = p
		}
	}
	return e
}

func clip(s string) string { return cut(s, maxName) }

// cut returns s cut to at most n bytes, at the start of a rune.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// toJSON returns the JSON of obj, nil for nil.
func toJSON(obj any) ([]byte, error) {
	if isNil(obj) {
		return nil, nil
	}
	return json.Marshal(obj)
}

func sameObject(a, b Object) bool {
	return a.Kind == b.Kind && a.Group == b.Group && a.Namespace == b.Namespace && a.Name == b.Name
}

type clientKey struct{}

// WithClient returns ctx carrying the address of the request's client
// (see auth.ClientAddr), which entries record.
func WithClient(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientKey{}, addr)
}

// ClientFrom returns the client address WithClient put in ctx.
func ClientFrom(ctx context.Context) string {
	s, _ := ctx.Value(clientKey{}).(string)
	return s
}
