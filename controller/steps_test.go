package controller

import (
	"testing"
	"time"
)

// Failed comparisons are retried sooner than the periodic refresh: 5 s,
// then twice as late up to 20 s, then once a minute after about five
// minutes of failures, each with at most a quarter more as jitter.
func TestComparisonRetry(t *testing.T) {
	for _, c := range []struct {
		failures int
		want     time.Duration
	}{
		{1, 5 * time.Second}, {2, 10 * time.Second}, {3, 20 * time.Second}, {4, 20 * time.Second},
		{18, 20 * time.Second}, {19, time.Minute}, {1000, time.Minute},
	} {
		for range 50 {
			if got := comparisonRetry(c.failures); got < c.want || got >= c.want+c.want/4 {
				t.Fatalf("comparisonRetry(%d) = %v, want in [%v, %v)", c.failures, got, c.want, c.want+c.want/4)
			}
		}
	}
	var waited time.Duration
	for n := 1; n <= slowRetryAfter; n++ {
		waited += comparisonRetry(n)
	}
	if waited < 4*time.Minute || waited > 7*time.Minute {
		t.Errorf("the fast retries last %v, want about five minutes", waited)
	}
}
