package controller

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

var (
	chartSource  = v1alpha1.ApplicationSource{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "1.0.0"}
	valuesSource = v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/values.git", TargetRevision: "main", Ref: "values"}
)

func TestSpecSources(t *testing.T) {
	single := v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/app.git", Path: "app"}
	for _, tc := range []struct {
		name      string
		spec      v1alpha1.ApplicationSpec
		wantMulti bool
		wantLen   int
		wantErr   string
	}{
		{"one source", v1alpha1.ApplicationSpec{Source: &single}, false, 1, ""},
		{"sources win over source", v1alpha1.ApplicationSpec{Source: &single, Sources: []v1alpha1.ApplicationSource{chartSource, valuesSource}}, true, 2, ""},
		{"one entry in sources is still multi-source", v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{chartSource}}, true, 1, ""},
		{"none", v1alpha1.ApplicationSpec{}, false, 0, "spec.source or spec.sources is required"},
		{"a ref twice", v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{valuesSource, chartSource, valuesSource}}, false, 0, `sources[2]: ref "values" names more than one source`},
		{"sourceHydrator wins and syncs its sync source", v1alpha1.ApplicationSpec{Source: &single, SourceHydrator: hydratorSpec("env/prod", "prod")}, false, 1, ""},
		{"sourceHydrator at the root", v1alpha1.ApplicationSpec{SourceHydrator: hydratorSpec(".", "prod")}, false, 0, "the repository root is not allowed"},
		{"sourceHydrator path escapes", v1alpha1.ApplicationSpec{SourceHydrator: hydratorSpec("../x", "prod")}, false, 0, "must not contain '..'"},
		{"sourceHydrator absolute path", v1alpha1.ApplicationSpec{SourceHydrator: hydratorSpec("/abs", "prod")}, false, 0, "must be relative"},
		{"sourceHydrator bad branch", v1alpha1.ApplicationSpec{SourceHydrator: hydratorSpec("env/prod", "a..b")}, false, 0, "syncSource.targetBranch"},
		{"a ref with a slash", v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{{RepoURL: "https://git.example.com/v.git", Ref: "a/b"}}}, false, 0, `sources[0]: ref "a/b" may hold only`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := specSources(&v1alpha1.Application{Spec: tc.spec})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, errInvalidSpec) {
					t.Fatalf("err = %v, want an invalid spec saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || set.multi != tc.wantMulti || len(set.list) != tc.wantLen {
				t.Errorf("set %+v, err %v; want multi %v with %d sources", set, err, tc.wantMulti, tc.wantLen)
			}
			if sh := tc.spec.SourceHydrator; sh != nil {
				want := v1alpha1.ApplicationSource{RepoURL: sh.DrySource.RepoURL, TargetRevision: sh.SyncSource.TargetBranch, Path: sh.SyncSource.Path}
				if set.list[0] != want {
					t.Errorf("source %+v, want the sync source %+v", set.list[0], want)
				}
			}
		})
	}
}

func hydratorSpec(path, branch string) *v1alpha1.SourceHydrator {
	return &v1alpha1.SourceHydrator{
		DrySource:  v1alpha1.DrySource{RepoURL: "https://git.example.com/dry.git", TargetRevision: "main", Path: "base"},
		SyncSource: v1alpha1.SyncSource{TargetBranch: branch, Path: path},
	}
}

// A sync renders the operation's sources (a rollback's) or the app's,
// at the revisions it resolved first once it has started.
func TestSyncSources(t *testing.T) {
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: []v1alpha1.ApplicationSource{chartSource, valuesSource}}}
	op := func(s v1alpha1.SyncOperation, res *v1alpha1.SyncOperationResult) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{Operation: v1alpha1.Operation{Sync: &s}, SyncResult: res}
	}
	old := []v1alpha1.ApplicationSource{{RepoURL: "https://charts.example.com", Chart: "web", TargetRevision: "0.9.0"}, valuesSource}
	for _, tc := range []struct {
		name          string
		st            *v1alpha1.OperationState
		wantSources   []v1alpha1.ApplicationSource
		wantRevisions []string
		wantErr       string
	}{
		{"the app's sources at their targets", op(v1alpha1.SyncOperation{}, nil), app.Spec.Sources, nil, ""},
		{"revisions asked for", op(v1alpha1.SyncOperation{Revisions: []string{"1.0.1", "abc"}}, nil), app.Spec.Sources, []string{"1.0.1", "abc"}, ""},
		{"a rollback's sources", op(v1alpha1.SyncOperation{Sources: old, Revisions: []string{"0.9.0", "def"}}, nil), old, []string{"0.9.0", "def"}, ""},
		{"revisions resolved first", op(v1alpha1.SyncOperation{}, &v1alpha1.SyncOperationResult{Revisions: []string{"1.0.0", "0123"}}), app.Spec.Sources, []string{"1.0.0", "0123"}, ""},
		{"one revision for several sources", op(v1alpha1.SyncOperation{Revision: "main"}, nil), nil, nil, `sync.revision "main" names no source`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := syncSources(app, tc.st)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !set.multi || !slices.EqualFunc(set.list, tc.wantSources, func(a, b v1alpha1.ApplicationSource) bool {
				return a.RepoURL == b.RepoURL && a.TargetRevision == b.TargetRevision
			}) ||
				!slices.Equal(set.revisions, tc.wantRevisions) {
				t.Errorf("set %+v, err %v; want sources %v at %v", set, err, tc.wantSources, tc.wantRevisions)
			}
		})
	}
}

// Automated sync of a multi-source app asks for the compared revisions of
// every source, and does not sync the same pair again after a failure.
func TestDecideAutoSyncMultiSource(t *testing.T) {
	now := time.Now()
	sources := []v1alpha1.ApplicationSource{chartSource, valuesSource}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Sources: sources, SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}}}}
	cmp := &Comparison{Sync: v1alpha1.SyncStatusCodeOutOfSync, Revisions: []string{"1.0.0", "r2"}, Resources: []ResourceResult{{Status: v1alpha1.SyncStatusCodeOutOfSync}}}
	failed := func(revs ...string) *v1alpha1.OperationState {
		return &v1alpha1.OperationState{
			Operation: v1alpha1.Operation{Sync: &v1alpha1.SyncOperation{}}, Phase: v1alpha1.OperationFailed, Message: "boom",
			SyncResult: &v1alpha1.SyncOperationResult{Revisions: revs, Sources: sources},
		}
	}
	d := decideAutoSync(app, &v1alpha1.ApplicationStatus{OperationState: failed("1.0.0", "r1")}, cmp, now)
	if d.op == nil || !slices.Equal(d.op.Sync.Revisions, []string{"1.0.0", "r2"}) || d.op.Sync.Revision != "" {
		t.Errorf("after a failure at other revisions: decision %+v, want a sync to 1.0.0,r2", d)
	}
	d = decideAutoSync(app, &v1alpha1.ApplicationStatus{OperationState: failed("1.0.0", "r2")}, cmp, now)
	if d.op != nil || d.refusal != "Failed sync attempt to 1.0.0,r2: boom" {
		t.Errorf("after a failure at the same revisions: decision %+v, want a refusal", d)
	}
}

// Of an object declared more than once, the last is kept, in its place,
// and the key is reported once; hooks without a name are never merged.
func TestLastWins(t *testing.T) {
	cm := func(name, from string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("web")
		u.SetName(name)
		u.SetLabels(map[string]string{"from": from})
		return u
	}
	hook := func(from string) *unstructured.Unstructured {
		u := cm("", from)
		u.SetGenerateName("migrate-")
		return u
	}
	objs := []*unstructured.Unstructured{cm("a", "1"), hook("1"), cm("b", "1"), cm("a", "2"), hook("2"), cm("c", "2"), cm("a", "3")}
	kept, repeated := lastWins(objs)
	var got []string
	for _, o := range kept {
		got = append(got, o.GetName()+o.GetGenerateName()+"@"+o.GetLabels()["from"])
	}
	if !slices.Equal(got, []string{"migrate-@1", "b@1", "migrate-@2", "c@2", "a@3"}) || !slices.Equal(repeated, []string{"ConfigMap web/a"}) {
		t.Errorf("kept %v, repeated %v", got, repeated)
	}
	if kept, repeated := lastWins(objs[:3]); len(kept) != 3 || repeated != nil {
		t.Errorf("no repeats: kept %d, repeated %v", len(kept), repeated)
	}
}
