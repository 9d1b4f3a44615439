package project

import (
	"slices"
	"testing"
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
