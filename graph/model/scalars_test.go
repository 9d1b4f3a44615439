package model

import (
	"bytes"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTimeRoundTrip(t *testing.T) {
	in := metav1.NewTime(time.Date(2026, 11, 30, 2, 3, 4, 0, time.FixedZone("CET", 3600)))
	var buf bytes.Buffer
	MarshalTime(in).MarshalGQL(&buf)
	if got, want := buf.String(), `"2026-11-30T01:03:04Z"`; got != want {
		t.Fatalf("MarshalTime = %s, want %s", got, want)
	}
	out, err := UnmarshalTime("2026-11-30T01:03:04Z")
	if err != nil || !out.Equal(&in) {
		t.Fatalf("UnmarshalTime = %v, %v; want %v", out, err, in)
	}
	for _, bad := range []any{"yesterday", 12, nil, "2026-11-30"} {
		if _, err := UnmarshalTime(bad); err == nil {
			t.Errorf("UnmarshalTime(%v) succeeded", bad)
		}
	}
}
