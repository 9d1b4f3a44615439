package apiserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/google/go-cmp/cmp"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// fragmentBomb is the document of issue 19: levels fragments on Query,
// each spreading the next twice, the last selecting version.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString("query Bomb { ...F0 }\n")
	for i := range levels - 1 {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { version { version } }\n", levels-1)
	return b.String()
}

func parseDocument(t *testing.T, q string) *ast.QueryDocument {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: q})
	if err != nil {
		t.Fatalf("parse %q: %v", q, err)
	}
	return doc
}

// expandedSelections counts the selections of doc by expanding every
// spread where it stands, as the engine's walks do: the slow reference
// for measureDocument on small documents.
func expandedSelections(doc *ast.QueryDocument) int {
	var count func(ast.SelectionSet) int
	count = func(set ast.SelectionSet) int {
		n := 0
		for _, sel := range set {
			n++
			switch sel := sel.(type) {
			case *ast.Field:
				n += count(sel.SelectionSet)
			case *ast.InlineFragment:
				n += count(sel.SelectionSet)
			case *ast.FragmentSpread:
				if f := doc.Fragments.ForName(sel.Name); f != nil {
					n += count(f.SelectionSet)
				}
			}
		}
		return n
	}
	total := 0
	for _, op := range doc.Operations {
		total += count(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		total += count(f.SelectionSet)
	}
	return total
}

func TestMeasureDocument(t *testing.T) {
	type want struct {
		Selections, Depth, Spreads, Repeats int
		Repeated                            string
		Cycle                               []string
	}
	tests := []struct {
		name string
		doc  string
		want want
	}{
		{
			name: "plain",
			doc:  "{ version { version commit } settings { url } }",
			want: want{Selections: 5, Depth: 2, Repeats: 1, Repeated: "version"},
		},
		{
			name: "wide",
			doc:  "{ " + strings.Repeat("version { version } ", 30) + "}",
			want: want{Selections: 60, Depth: 2, Repeats: 30, Repeated: "version"},
		},
		{
			name: "aliases are places of their own",
			doc:  "{ a: version { version } b: version { version } }",
			want: want{Selections: 4, Depth: 2, Repeats: 1, Repeated: "a"},
		},
		{
			name: "deep through fragments",
			doc: `{ ...A }
				fragment A on Query { version { ...B } }
				fragment B on Version { ... on Version { version } }`,
			// B: inline fragment and version = 2; A: version, ...B and
			// B's 2 = 4; the operation: ...A and A's 4 = 5.
			want: want{Selections: 11, Depth: 2, Spreads: 2, Repeats: 1, Repeated: "version"},
		},
		{
			name: "a fragment spread twice is counted twice",
			doc:  "{ ...A ...A } fragment A on Query { version { version } }",
			want: want{Selections: 8, Depth: 2, Spreads: 2, Repeats: 2, Repeated: "version"},
		},
		{
			name: "fields of the same name merge their places",
			doc:  "{ version { version } version { version } version { commit } }",
			want: want{Selections: 6, Depth: 2, Repeats: 3, Repeated: "version"},
		},
		{
			name: "repeats under merged parents",
			doc:  "{ " + strings.Repeat("version { version version } ", 10) + "}",
			want: want{Selections: 30, Depth: 2, Repeats: 20, Repeated: "version.version"},
		},
		{
			name: "bomb of 30 levels",
			doc:  fragmentBomb(30),
			// F29 costs 2; Fi costs 2*(1+cost(Fi+1)), so Fi = 2^(31-i) - 2.
			// The operation costs 1 + F0; the definitions add F0..F29.
			want: want{Selections: 1 + (1<<31 - 2) + (1<<32 - 64), Depth: 2, Spreads: 59},
		},
		{
			name: "bomb saturates",
			doc:  fragmentBomb(80),
			want: want{Selections: costCeiling, Depth: 2, Spreads: 159},
		},
		{
			name: "self spread",
			doc:  "{ ...A } fragment A on Query { version { version } ...A }",
			// The spread closing the cycle costs only itself.
			want: want{Selections: 7, Depth: 2, Spreads: 2, Cycle: []string{"A", "A"}},
		},
		{
			name: "cycle through two fragments and a field",
			doc:  "{ ...A } fragment A on Query { version { ...B } } fragment B on Version { version ...C } fragment C on Version { ... on Version { ...B } }",
			want: want{Selections: 19, Depth: 2, Spreads: 4, Cycle: []string{"B", "C", "B"}},
		},
		{
			name: "unknown fragment is left to validation",
			doc:  "{ ...Nope version { version } }",
			want: want{Selections: 3, Depth: 2, Spreads: 1, Repeats: 1, Repeated: "version"},
		},
		{
			name: "several operations",
			doc:  "query A { version { version } } query B { settings { url } me { username } }",
			want: want{Selections: 6, Depth: 2, Repeats: 1, Repeated: "version"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := parseDocument(t, tt.doc)
			c := measureDocument(doc)
			if len(c.cycle) == 0 && c.selections < 10_000 {
				measureRepeats(doc, &c)
			}
			got := want{
				Selections: c.selections, Depth: c.depth, Spreads: c.spreads,
				Repeats: c.repeats, Repeated: c.repeated, Cycle: c.cycle,
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("cost (-got +want):\n%s", diff)
			}
		})
	}
}

// TestMeasureDocumentMemo checks the memoised count against expanding
// every spread, on documents small enough to expand.
func TestMeasureDocumentMemo(t *testing.T) {
	docs := []string{
		fragmentBomb(1),
		fragmentBomb(2),
		fragmentBomb(12),
		`{ ...A version { ...B } }
		 fragment A on Query { ...B2 settings { url } version { ...B ...B } }
		 fragment B on Version { version commit ... on Version { ...C } }
		 fragment B2 on Query { version { ...C } }
		 fragment C on Version { goVersion }
		 fragment Unused on Query { ...A ...A }`,
		"query X { ...A ...A ...A } query Y { ...A } fragment A on Query { me { username groups } }",
	}
	for i, q := range docs {
		doc := parseDocument(t, q)
		if got, want := measureDocument(doc).selections, expandedSelections(doc); got != want {
			t.Errorf("document %d: measured %d selections, expanding counts %d", i, got, want)
		}
	}
}

func TestCountTokens(t *testing.T) {
	tests := []struct {
		query   string
		limit   int
		want    int
		wantErr error
	}{
		{"{ version { version } }", 100, 6, nil},
		{"# hello\n{ version }", 100, 4, nil},
		{"{ version { version } }", 5, 6, errTooManyTokens},
		{"{ version { version } }", 6, 6, nil},
		{"", 10, 0, nil},
	}
	for _, tt := range tests {
		got, err := countTokens(tt.query, tt.limit)
		if got != tt.want || err != tt.wantErr { //nolint:errorlint // a sentinel returned as is
			t.Errorf("countTokens(%q, %d) = %d, %v; want %d, %v", tt.query, tt.limit, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := countTokens(`{ version(x: "unterminated) }`, 100); err == nil {
		t.Error("an unterminated string lexed")
	}
}

// TestDocumentLimitsCheck checks which limit refuses a cost first, and
// the message a caller reads.
func TestDocumentLimitsCheck(t *testing.T) {
	l := documentLimits{tokens: 100, selections: 50, depth: 5, spreads: 10, repeats: 3}
	tests := []struct {
		name      string
		cost      documentCost
		anonymous bool
		want      string // "" means admitted
	}{
		{"within", documentCost{tokens: 100, selections: 50, depth: 5, spreads: 10, repeats: 3}, false, ""},
		{"cycle", documentCost{cycle: []string{"A", "B", "A"}}, true, "fragment A spreads itself: A -> B -> A"},
		{"tokens", documentCost{tokens: 101}, false, "document has more than 100 tokens"},
		{"tokens without a session", documentCost{tokens: 101}, true,
			"document has more than 100 tokens (the limit for callers without a session: log in first)"},
		{"selections", documentCost{selections: costCeiling, depth: 99}, false,
			"document expands to more than 50 selections once its fragment spreads are expanded"},
		{"spreads", documentCost{spreads: 11}, false, "document has more than 10 fragment spreads"},
		{"depth", documentCost{depth: 6}, false, "operation is nested deeper than the limit of 5"},
		{"repeats", documentCost{repeats: 4, repeated: "version.version"}, false, "document selects version.version more than 3 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := l.check(tt.cost, tt.anonymous)
			var got string
			if err != nil {
				got = err.Message
				if code := err.Extensions["code"]; code != "BAD_USER_INPUT" {
					t.Errorf("code %v, want BAD_USER_INPUT", code)
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDocumentBudgetClientGone checks that a request whose client has
// gone is not measured, validated or executed.
func TestDocumentBudgetClientGone(t *testing.T) {
	b := documentBudget{
		member:        documentLimits{tokens: 100, selections: 100, depth: 5, spreads: 5, repeats: 5},
		anonymous:     documentLimits{tokens: 100, selections: 100, depth: 5, spreads: 5, repeats: 5},
		authenticated: func(context.Context) bool { return true },
		costs:         lru.New[documentCost](10),
	}
	ctx, cancel := context.WithCancel(t.Context())
	params := &graphql.RawParams{Query: "{ version { version } }"}
	if err := b.MutateOperationParameters(ctx, params); err != nil {
		t.Fatalf("before cancel: %v", err)
	}
	cancel()
	if err := b.MutateOperationParameters(ctx, params); err == nil || !strings.Contains(err.Message, "client went away") {
		t.Errorf("after cancel: %v", err)
	}
	if err := b.MutateOperationContext(ctx, &graphql.OperationContext{}); err == nil {
		t.Error("an operation whose client went away was let through")
	}
}
