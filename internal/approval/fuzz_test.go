package approval

import (
	"testing"
)

// FuzzParse reads arbitrary values of the approvals annotation, which
// whoever may patch the Application can write: nothing panics, no more
// than MaxRecords count, and what was read encodes to a value that reads
// back the same.
//
//	go test -run '^$' -fuzz FuzzParse ./internal/approval/
func FuzzParse(f *testing.F) {
	f.Add(`[{"user":"alice","via":"console","groups":["ops"],"at":"2026-12-01T10:00:00Z","operation":"op-1"}]`)
	f.Add(`[{"at":"not a time"}]`)
	f.Add(`[null, {}, {"groups": null}]`)
	f.Add(`{"user": "bob"}`)
	f.Add(`[` + "\x00")
	f.Fuzz(func(t *testing.T, value string) {
		records, err := Parse(value)
		if err != nil {
			if records != nil {
				t.Fatalf("Parse returned %d records with error %v", len(records), err)
			}
			return
		}
		if len(records) > MaxRecords {
			t.Fatalf("%d records count, more than %d", len(records), MaxRecords)
		}
		if len(records) == 0 {
			return
		}
		once := Encode(records)
		again, err := Parse(once)
		if err != nil {
			t.Fatalf("Encode's own value %q does not parse: %v", once, err)
		}
		if Encode(again) != once {
			t.Fatalf("round trip changed %q into %q", once, Encode(again))
		}
	})
}
