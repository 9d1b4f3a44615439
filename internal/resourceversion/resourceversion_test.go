package resourceversion

import "testing"

func TestAtLeast(t *testing.T) {
	for _, tt := range []struct {
		have, want string
		ok         bool
	}{
		{"42", "42", true},
		{"43", "42", true},
		{"9", "10", false}, // numbers, not strings: "9" > "10" as text
		{"100", "99", true},
		{"", "42", true}, // not a number: never waited on
		{"abc", "42", true},
		{"42", "xyz", true},
		{"18446744073709551615", "1", true},
	} {
		if got := AtLeast(tt.have, tt.want); got != tt.ok {
			t.Errorf("AtLeast(%q, %q) = %v, want %v", tt.have, tt.want, got, tt.ok)
		}
	}
}
