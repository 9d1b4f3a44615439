package audit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth"
)

// A Secret's values and credential fields never reach a patch, whether
// the patch creates, changes or deletes them.
func TestDiffRedacts(t *testing.T) {
	meta := metav1.ObjectMeta{Namespace: "graphcd", Name: "repo-1", ResourceVersion: "7",
		Annotations: map[string]string{lastApplied: `{"data":{"password":"c2VjcmV0"}}`}}
	before := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"url": []byte("https://git"), "password": []byte("old-secret")}}
	after := before.DeepCopy()
	after.ResourceVersion = "8"
	after.Data["password"] = []byte("new-secret")
	after.Data["sshPrivateKey"] = []byte("-----BEGIN KEY")
	after.StringData = map[string]string{"bearerToken": "tok-secret"}
	tests := []struct {
		name          string
		before, after any
		want          string
	}{
		{"create", nil, before, `[{"op":"add","path":"","value":{"data":{"password":"<redacted>","url":"<redacted>"},` +
			`"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"<redacted>"},"name":"repo-1","namespace":"graphcd"}}}]`},
		{"update", before, after, `[{"op":"replace","path":"/data/password","value":"<redacted>"},` +
			`{"op":"add","path":"/data/sshPrivateKey","value":"<redacted>"},{"op":"add","path":"/stringData","value":{"bearerToken":"<redacted>"}}]`},
		{"delete", before, nil, `[{"op":"remove","path":""}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, rec := Begin(t.Context())
			Change(ctx, tt.before, tt.after)
			e := rec.Entry(Call{Field: "createRepository"})
			var got, want any
			if err := json.Unmarshal(e.Patch, &got); err != nil {
				t.Fatalf("patch %s: %v", e.Patch, err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			// Ops on different paths may come in any order.
			byPath := cmpopts.SortSlices(func(a, b any) bool {
				return a.(map[string]any)["path"].(string) < b.(map[string]any)["path"].(string)
			})
			if d := cmp.Diff(got, want, byPath); d != "" {
				t.Errorf("patch (-got +want):\n%s", d)
			}
			if strings.Contains(string(e.Patch), "secret") && !strings.Contains(tt.want, "secret") {
				t.Errorf("patch leaks: %s", e.Patch)
			}
			if e.Object.Kind != "Secret" || e.Object.Name != "repo-1" {
				t.Errorf("object = %+v", e.Object)
			}
		})
	}
}

// Credential fields are redacted in any kind; an application's other
// fields are not.
func TestDiffRedactsCredentialFields(t *testing.T) {
	before := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n"}}
	after := before.DeepCopy()
	after.Spec.Project = "p"
	after.Annotations = map[string]string{"token": "abc"}
	ctx, rec := Begin(context.Background())
	Change(ctx, before, after)
	e := rec.Entry(Call{Field: "updateApplicationSpec", Principal: auth.Principal{Subject: "alice"}, ErrorCode: ""})
	if !strings.Contains(string(e.Patch), `"value":"p"`) || strings.Contains(string(e.Patch), "abc") {
		t.Errorf("patch = %s", e.Patch)
	}
	if e.Object.Project != "p" || e.User != "alice" || e.Outcome != Success {
		t.Errorf("entry = %+v", e)
	}
}

// A refused mutation names the RBAC object it was refused for.
func TestRefusedNamesRBACObject(t *testing.T) {
	ctx, rec := Begin(context.Background())
	Authorized(ctx, Object{Kind: "applications", Project: "shop", Namespace: "apps", Name: "web"}, false)
	Authorized(ctx, Object{Kind: "applications", Project: "other", Name: "x"}, true)
	e := rec.Entry(Call{Field: "syncApplication", ErrorCode: "FORBIDDEN"})
	want := Object{Kind: "applications", Project: "shop", Namespace: "apps", Name: "web"}
	if d := cmp.Diff(e.Object, want); d != "" || e.Outcome != Failure || e.User != "anonymous" || e.Patch != nil {
		t.Errorf("entry = %+v (-got +want object):\n%s", e, d)
	}
}

// The memory store keeps its size, newest first, and pages by cursor.
func TestMemoryBounded(t *testing.T) {
	m := NewMemory(3)
	for i := range 5 {
		e := &Entry{Field: string(rune('a' + i)), User: "u"}
		if err := m.Append(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	p, err := m.List(t.Context(), Query{First: 2})
	if err != nil {
		t.Fatal(err)
	}
	fields := func(p Page) (out []string) {
		for _, e := range p.Entries {
			out = append(out, e.Field)
		}
		return out
	}
	if d := cmp.Diff(fields(p), []string{"e", "d"}); d != "" || !p.More {
		t.Errorf("first page (-got +want):\n%s more=%v", d, p.More)
	}
	p, err = m.List(t.Context(), Query{First: 2, After: p.Entries[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fields(p), []string{"c"}); d != "" || p.More {
		t.Errorf("second page (-got +want):\n%s more=%v", d, p.More)
	}
	if _, err := m.List(t.Context(), Query{After: "nonsense"}); err == nil {
		t.Error("a bad cursor is accepted")
	}
}

// A refusal's Event fits the Event API's note however long the names the
// client sent: every name is clipped in the entry, the note after the
// project is added, and the client's address stays out of it.
func TestEventNoteBounded(t *testing.T) {
	long := strings.Repeat("x", 3000)
	ctx, rec := Begin(t.Context())
	Authorized(ctx, Object{Kind: long, Group: long, Namespace: long, Name: long, Project: "p" + long}, false)
	e := rec.Entry(Call{Field: long, Operation: long, Principal: auth.Principal{Subject: long}, Client: "192.0.2.7", ErrorCode: "FORBIDDEN"})
	o := e.Object
	for what, s := range map[string]string{"kind": o.Kind, "group": o.Group, "namespace": o.Namespace, "name": o.Name, "project": o.Project} {
		if len(s) > maxName {
			t.Errorf("%s of %d bytes kept", what, len(s))
		}
	}
	ev := NewEventWriter(nil, "graphcd", "").event(&e)
	if len(ev.Note) > 1024 || strings.Contains(ev.Note, "192.0.2.7") {
		t.Errorf("note of %d bytes: %.80q", len(ev.Note), ev.Note)
	}
	if ev.Regarding.Kind != "ConfigMap" || ev.Namespace != "graphcd" {
		t.Errorf("a refusal's Event regards %+v in %s", ev.Regarding, ev.Namespace)
	}
}

// Credentials in the URLs of any field never reach a patch; other
// strings with an "@" are kept.
func TestDiffRedactsURLCredentials(t *testing.T) {
	before := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "n"}}
	after := before.DeepCopy()
	after.Spec.Source = &v1alpha1.ApplicationSource{RepoURL: "https://bot:tok-secret@git.example.com/apps.git"}
	after.Annotations = map[string]string{"owner": "alice@example.com", "notes": "mirror of https://x:tok-secret@example.org/a"}
	ctx, rec := Begin(t.Context())
	Change(ctx, before, after)
	e := rec.Entry(Call{Field: "updateApplicationSpec"})
	p := string(e.Patch)
	if strings.Contains(p, "tok-secret") || !strings.Contains(p, "git.example.com/apps.git") || !strings.Contains(p, "alice@example.com") {
		t.Errorf("patch = %s", p)
	}
}

// Memory.List asks Query.Allow outside the store's lock: an Allow that
// appends (as a mutation may while a page is read) does not deadlock,
// and the page holds only what Allow let through.
func TestMemoryAllowOutsideLock(t *testing.T) {
	m := NewMemory(2000) // room for the appends during the read
	for i := range 500 {
		if err := m.Append(t.Context(), &Entry{Field: "f", Object: Object{Project: []string{"a", "b"}[i%2]}}); err != nil {
			t.Fatal(err)
		}
	}
	asked := 0
	p, err := m.List(t.Context(), Query{First: MaxPage, Allow: func(e *Entry) bool {
		asked++
		if err := m.Append(t.Context(), &Entry{Field: "during"}); err != nil {
			t.Error(err)
		}
		return e.Object.Project == "a"
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 250 || p.More || asked != 500 {
		t.Errorf("got %d entries (more %v) after %d asks, want 250 of project a after 500", len(p.Entries), p.More, asked)
	}
	for _, e := range p.Entries {
		if e.Object.Project != "a" {
			t.Errorf("entry of project %q listed", e.Object.Project)
		}
	}
}

// A Secret patched on a destination cluster (through catalog, as an
// unstructured object) is no Secret of graphcd's: its Event regards
// graphcd's settings ConfigMap, never a Secret of that name in the
// management cluster; graphcd's own Secrets keep theirs.
func TestLiveSecretEventRegardsGraphcd(t *testing.T) {
	live := &unstructured.Unstructured{}
	live.SetAPIVersion("v1")
	live.SetKind("Secret")
	live.SetNamespace("prod")
	live.SetName("db")
	own := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "graphcd", Name: "repo-1"}}
	w := NewEventWriter(nil, "graphcd", "")
	for _, tt := range []struct {
		name     string
		obj      any
		kind, ns string
	}{
		{"live", live, "ConfigMap", "graphcd"},
		{"graphcd's", own, "Secret", "graphcd"},
	} {
		ctx, rec := Begin(t.Context())
		Change(ctx, tt.obj, tt.obj)
		e := rec.Entry(Call{Field: "patchResource"})
		ev := w.event(&e)
		if ev.Regarding.Kind != tt.kind || ev.Namespace != tt.ns {
			t.Errorf("%s: Event in %s regards %+v, want a %s in %s", tt.name, ev.Namespace, ev.Regarding, tt.kind, tt.ns)
		}
	}
}
