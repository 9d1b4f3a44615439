package project

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

func TestSignatureKeys(t *testing.T) {
	spec := v1alpha1.AppProjectSpec{SignatureKeys: []v1alpha1.SignatureKey{
		{KeyID: "4aee18f83afdeb23"},
		{KeyID: "D56C4FCA57A46444 "},
		{KeyID: "6F9D0DC6B1A6B5E1A1B6A4E8D56C4FCA57A46444"}, // a fingerprint ending in the ID above
	}}
	r := mustCompile(t, spec)
	want := []string{"4AEE18F83AFDEB23", "D56C4FCA57A46444"}
	if diff := cmp.Diff(r.SignatureKeys(), want); diff != "" {
		t.Errorf("SignatureKeys (-got +want):\n%s", diff)
	}
	if !r.SignatureRequired() {
		t.Error("SignatureRequired = false with keys")
	}
	for id, want := range map[string]bool{
		"4AEE18F83AFDEB23":                         true,
		"4aee18f83afdeb23":                         true,
		"0000000000000000000000004AEE18F83AFDEB23": true,
		"5AEE18F83AFDEB23":                         false,
		"57A46444":                                 false, // short IDs are not accepted
		"":                                         false,
	} {
		if got := r.SignatureKeyAllowed(id); got != want {
			t.Errorf("SignatureKeyAllowed(%q) = %v, want %v", id, got, want)
		}
	}
	if mustCompile(t, v1alpha1.AppProjectSpec{}).SignatureRequired() {
		t.Error("SignatureRequired = true without keys")
	}
}
