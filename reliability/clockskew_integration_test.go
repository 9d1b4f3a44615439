//go:build integration

package reliability

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/graphcd/graphcd/auth/session"
)

// Clock skew between the API replicas: one replica's session clock is
// moved (graphcd server's hidden --clock-skew), first ahead by less than
// session.Leeway, then by more. Within the leeway, a token either replica
// issues is accepted by both; beyond it, a token the skewed replica issues
// is refused by the other (401, never an error of another kind) until
// the clocks agree again, while tokens of the other replica keep working
// on both. Recovery: from the skewed replica started again on the true
// clock until a token it issues is accepted by the other.
func clockSkew(t *testing.T, in *installation, l *load) []outcome {
	skewed, other := in.Servers[1], in.ServerURLs[0]
	args := slices.Clone(skewed.Args)
	restart := func(skew time.Duration) {
		skewed.Stop()
		skewed.Args = args
		if skew != 0 {
			skewed.Args = append(slices.Clone(args), "--clock-skew", skew.String())
		}
		startRole(t, skewed)
	}
	t.Cleanup(func() {
		if !slices.Equal(skewed.Args, args) {
			restart(0)
		}
	})
	// crossCheck logs in at each replica and asks the other with the token.
	crossCheck := func() (fromSkewed, fromOther error) {
		fromSkewed = query(t.Context(), other, l.session(t, in.ServerURLs[1]))
		fromOther = query(t.Context(), in.ServerURLs[1], l.session(t, other))
		return fromSkewed, fromOther
	}

	within := session.Leeway * 2 / 3
	restart(within)
	if a, b := crossCheck(); a != nil || b != nil {
		t.Errorf("clocks %v apart (within the leeway of %v): a token of the skewed replica at the other: %v; the other's at the skewed one: %v", within, session.Leeway, a, b)
	}

	beyond := 4 * session.Leeway
	restart(beyond)
	refused, accepted := crossCheck()
	if refused == nil || !strings.Contains(refused.Error(), "UNAUTHENTICATED") {
		t.Errorf("clocks %v apart: a token issued %v in the other replica's future: %v, want it refused as UNAUTHENTICATED", beyond, beyond, refused)
	}
	if accepted != nil {
		t.Errorf("clocks %v apart: a token of the true clock at the replica ahead: %v, want it accepted", beyond, accepted)
	}

	restart(0)
	back := time.Now()
	waitFor(t, time.Minute, "the replicas to accept each other's tokens", func() (bool, string) {
		a, b := crossCheck()
		if a != nil || b != nil {
			return false, fmt.Sprintf("%v; %v", a, b)
		}
		return true, ""
	})
	return []outcome{{
		fault:    fmt.Sprintf("an API replica's clock %v, then %v ahead of the other's", within, beyond),
		recovery: time.Since(back),
		note: fmt.Sprintf("%v apart (leeway %v): each replica accepted the other's tokens; %v apart: the skewed replica's tokens refused by the other (%s), the other's accepted by both",
			within, session.Leeway, beyond, shortError(refused)),
	}}
}

// shortError is err's last words, for the table.
func shortError(err error) string {
	if err == nil {
		return "no error"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s)-i < 120 {
		return strings.TrimSpace(s[i+2:])
	}
	return s
}
