package auth

import (
	"context"
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/graphcd/graphcd/api/v1alpha1"
	"github.com/graphcd/graphcd/auth/rbac"
)

func as(sub string, groups ...string) context.Context {
	return NewContext(context.Background(), Principal{Subject: sub, Groups: groups})
}

func TestAuthorizerBuiltInUntilPolicy(t *testing.T) {
	a := NewAuthorizer()
	if !a.Can(as("admin"), "applications", "sync", "p/app") {
		t.Error("admin may not sync with the built-in policy")
	}
	if a.Can(as("alice"), "applications", "get", "p/app") {
		t.Error("alice may get without any policy")
	}
	if a.Can(context.Background(), "applications", "get", "p/app") {
		t.Error("an anonymous request may get")
	}
}

func TestAuthorizerPolicyAndGroups(t *testing.T) {
	a := NewAuthorizer()
	err := a.SetPolicy(map[string]string{
		"policy.csv": "p, role:team, applications, sync, team/*, allow\n" +
			"p, role:team, applications, get, team/*, allow\n" +
			"g, org:team, role:team\n" +
			"this is not a policy line\n",
	})
	var verr *rbac.ValidationError
	if !errors.As(err, &verr) || len(verr.Lines) != 1 || verr.Lines[0].Line != 4 {
		t.Fatalf("SetPolicy error = %v, want one invalid line (4)", err)
	}
	if !a.Can(as("bob", "org:team"), "applications", "sync", "team/web") {
		t.Error("a member of org:team may not sync in team")
	}
	if a.Can(as("bob", "org:team"), "applications", "sync", "other/web") {
		t.Error("a member of org:team may sync outside team")
	}
	if a.Can(as("bob"), "applications", "sync", "team/web") {
		t.Error("bob without the group may sync")
	}
}

func TestAuthorizerKeepsPolicyWhenUnusable(t *testing.T) {
	a := NewAuthorizer()
	if err := a.SetPolicy(map[string]string{"policy.default": "role:readonly"}); err != nil {
		t.Fatal(err)
	}
	err := a.SetPolicy(map[string]string{"policy.matchMode": "fuzzy", "policy.default": "role:admin"})
	if err == nil {
		t.Fatal("an unknown matchMode was accepted")
	}
	if a.Can(as("alice"), "applications", "delete", "p/app") {
		t.Error("a broken ConfigMap opened access (alice may delete)")
	}
	if !a.Can(as("alice"), "applications", "get", "p/app") {
		t.Error("the previous policy (default readonly) was dropped")
	}
}

func TestAuthorizerProjectRolesSurvivePolicyChange(t *testing.T) {
	a := NewAuthorizer()
	proj := &v1alpha1.AppProject{ObjectMeta: metav1.ObjectMeta{Name: "shop"}, Spec: v1alpha1.AppProjectSpec{
		Roles: []v1alpha1.ProjectRole{{
			Name:     "ci",
			Policies: []string{"p, proj:shop:ci, applications, sync, shop/*, allow"},
			Groups:   []string{"org:shop-devs"},
		}},
	}}
	if err := a.SetProject(proj); err != nil {
		t.Fatal(err)
	}
	changed := a.Changed()
	if err := a.SetPolicy(map[string]string{"policy.default": "role:readonly"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("Changed was not closed by SetPolicy")
	}
	for _, ctx := range []context.Context{as("proj:shop:ci"), as("carol", "org:shop-devs")} {
		if !a.Can(ctx, "applications", "sync", "shop/cart") {
			p, _ := FromContext(ctx)
			t.Errorf("%v may not sync in shop after the policy changed", p)
		}
	}
	a.RemoveProject("shop")
	if a.Can(as("proj:shop:ci"), "applications", "sync", "shop/cart") {
		t.Error("the role of a removed project still works")
	}
}

func TestAuthorizerAnonymous(t *testing.T) {
	a := NewAuthorizer()
	if err := a.SetPolicy(map[string]string{"policy.default": "role:readonly"}); err != nil {
		t.Fatal(err)
	}
	anon := context.Background()
	if a.Authenticated(anon) || a.Can(anon, "applications", "get", "p/app") {
		t.Error("anonymous access works while it is off")
	}
	a.SetAnonymous(true)
	if !a.Authenticated(anon) || !a.Can(anon, "applications", "get", "p/app") {
		t.Error("anonymous access with the default role does not work while it is on")
	}
	if a.Can(anon, "applications", "sync", "p/app") {
		t.Error("anonymous may do more than the default role")
	}
}

func TestAuthorizerPermissions(t *testing.T) {
	a := NewAuthorizer()
	if err := a.SetPolicy(map[string]string{
		"policy.csv": "p, role:team, applications, sync, team/*, allow\n" +
			"p, dave, applications, delete, team/*, deny\n" +
			"g, org:team, role:team\n",
	}); err != nil {
		t.Fatal(err)
	}
	got := a.Permissions(as("dave", "org:team"))
	want := []rbac.Rule{
		{Subject: "dave", Resource: "applications", Action: "delete", Object: "team/*", Effect: rbac.Deny},
		{Subject: "role:team", Resource: "applications", Action: "sync", Object: "team/*", Effect: rbac.Allow},
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("Permissions lack %+v; got %+v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Permissions = %+v, want just %+v", got, want)
	}
	if p := a.Permissions(context.Background()); p != nil {
		t.Errorf("anonymous Permissions = %+v, want none", p)
	}
}
