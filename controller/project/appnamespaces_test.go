package project

import (
	"errors"
	"slices"
	"testing"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestAppNamespaces(t *testing.T) {
	t.Parallel()
	tests := []struct {
		patterns []string
		allowed  []string
		refused  []string
		watch    []string
	}{
		{nil, []string{"graphcd"}, []string{"team-a", ""}, []string{"graphcd"}},
		{[]string{"team-a", "team-b"}, []string{"graphcd", "team-a", "team-b"}, []string{"team-c"}, []string{"graphcd", "team-a", "team-b"}},
		{[]string{"team-*"}, []string{"team-a", "team-zz"}, []string{"kube-system", "ateam-a"}, nil},
		{[]string{"/^ci-[0-9]+$/"}, []string{"ci-12"}, []string{"ci-x", "xci-1"}, nil},
	}
	for _, tt := range tests {
		a, err := CompileAppNamespaces("graphcd", tt.patterns)
		if err != nil {
			t.Fatalf("%v: %v", tt.patterns, err)
		}
		for _, ns := range tt.allowed {
			if !a.Allowed(ns) {
				t.Errorf("%v refuses %q", tt.patterns, ns)
			}
		}
		for _, ns := range tt.refused {
			if a.Allowed(ns) {
				t.Errorf("%v allows %q", tt.patterns, ns)
			}
		}
		if got := a.Watch(); !slices.Equal(got, tt.watch) {
			t.Errorf("%v: Watch() = %v, want %v", tt.patterns, got, tt.watch)
		}
	}
	if _, err := CompileAppNamespaces("graphcd", []string{"/team-(/"}); err == nil {
		t.Error("a bad expression compiles")
	}
	all, err := CompileAppNamespaces("", nil)
	if err != nil || !all.Allowed("anything") || all.Watch() != nil {
		t.Errorf("no own namespace: %v %v", all, err)
	}
}

func TestAdmits(t *testing.T) {
	t.Parallel()
	served, err := CompileAppNamespaces("graphcd", []string{"team-*"})
	if err != nil {
		t.Fatal(err)
	}
	tenants := mustCompile(t, v1alpha1.AppProjectSpec{SourceNamespaces: []string{"team-a"}})
	found := func(r *Rules) func() (*Rules, error) { return func() (*Rules, error) { return r, nil } }
	broken := func() (*Rules, error) { return nil, errors.New("cache unavailable") }
	asked := func() (*Rules, error) { t.Error("rules asked for an app in graphcd's namespace"); return nil, nil }
	tests := []struct {
		name      string
		namespace string
		rules     func() (*Rules, error)
		want      bool
	}{
		{"graphcd's namespace, project not asked", "graphcd", asked, true},
		{"served, project allows it", "team-a", found(tenants), true},
		{"served, project does not allow it", "team-b", found(tenants), false},
		{"served, project does not exist", "team-a", found(nil), false},
		{"served, project cannot be read", "team-a", broken, false},
		{"not served, whatever the project", "other", found(mustCompile(t, v1alpha1.AppProjectSpec{SourceNamespaces: []string{"*"}})), false},
	}
	for _, tt := range tests {
		if got := served.Admits(tt.namespace, tt.rules); got != tt.want {
			t.Errorf("%s: Admits(%q) = %v, want %v", tt.name, tt.namespace, got, tt.want)
		}
	}
	all, err := CompileAppNamespaces("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !all.Admits("anywhere", asked) {
		t.Error("a server of every namespace refuses an app")
	}
}
