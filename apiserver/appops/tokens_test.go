package appops

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func tokenProject() *v1alpha1.AppProject {
	return &v1alpha1.AppProject{
		Spec: v1alpha1.AppProjectSpec{Roles: []v1alpha1.ProjectRole{
			{Name: "ci", JWTTokens: []v1alpha1.JWTToken{{ID: "a", IssuedAt: 1}}},
			{Name: "ops"},
		}},
		Status: v1alpha1.AppProjectStatus{JWTTokensByRole: map[string]v1alpha1.JWTTokens{
			"ci": {Items: []v1alpha1.JWTToken{{ID: "old", IssuedAt: 0}}},
		}},
	}
}

func TestAddToken(t *testing.T) {
	p := tokenProject()
	if !addToken(p, "ci", v1alpha1.JWTToken{ID: "b", IssuedAt: 2}) {
		t.Fatal("a new id was refused")
	}
	if addToken(p, "ci", v1alpha1.JWTToken{ID: "a", IssuedAt: 3}) {
		t.Error("an id the role has was added again")
	}
	want := []v1alpha1.JWTToken{{ID: "a", IssuedAt: 1}, {ID: "b", IssuedAt: 2}}
	if diff := cmp.Diff(p.Spec.Roles[0].JWTTokens, want); diff != "" {
		t.Errorf("ci's tokens (-got +want):\n%s", diff)
	}
	if len(p.Spec.Roles[1].JWTTokens) != 0 {
		t.Errorf("another role got tokens: %v", p.Spec.Roles[1].JWTTokens)
	}
}

func TestRemoveToken(t *testing.T) {
	for _, tc := range []struct {
		name, role, id string
		want           *v1alpha1.JWTToken
		wantSpec       int
		wantStatus     int
	}{
		{"from the spec", "ci", "a", &v1alpha1.JWTToken{ID: "a", IssuedAt: 1}, 0, 1},
		{"from the status", "ci", "old", &v1alpha1.JWTToken{ID: "old"}, 1, 0},
		{"unknown id", "ci", "x", nil, 1, 1},
		{"other role", "ops", "a", nil, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tokenProject()
			got := removeToken(p, tc.role, tc.id)
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("removed (-got +want):\n%s", diff)
			}
			if n := len(p.Spec.Roles[0].JWTTokens); n != tc.wantSpec {
				t.Errorf("%d tokens left in the spec, want %d", n, tc.wantSpec)
			}
			if n := len(p.Status.JWTTokensByRole["ci"].Items); n != tc.wantStatus {
				t.Errorf("%d tokens left in the status, want %d", n, tc.wantStatus)
			}
		})
	}
}
