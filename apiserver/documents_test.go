package apiserver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/graphcd/graphcd/resolvers"
)

// consoleDocument is a graphql(`...`) call of the console's source.
var consoleDocument = regexp.MustCompile("graphql\\(`([^`]*)`\\)")

// TestRealDocumentsAdmitted runs every operation the console and the CLI
// send through the document limits of a server with default options, as
// their clients send them: with the fragments they spread, and, for the
// console (urql), __typename added to every selection set. Operations
// that ask only public fields must also pass without a session.
func TestRealDocumentsAdmitted(t *testing.T) {
	var console, cli []string
	err := filepath.WalkDir(filepath.Join("..", "console", "web", "src"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "gql" {
			return filepath.SkipDir // generated from the documents read here
		}
		if ext := filepath.Ext(path); ext != ".ts" && ext != ".tsx" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range consoleDocument.FindAllStringSubmatch(string(src), -1) {
			console = append(console, m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("..", "client", "*.graphql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cli = append(cli, string(src))
	}

	member, anonymous := documentLimitsOf(withDefaults(Options{}))
	anonymousOnly := false
	budget := documentBudget{
		member: member, anonymous: anonymous,
		authenticated: func(context.Context) bool { return !anonymousOnly },
		costs:         lru.New[documentCost](10),
	}
	for _, set := range []struct {
		name      string
		sources   []string
		typenames bool
		atLeast   int
	}{
		{"console", console, true, 40},
		{"CLI", cli, false, 15},
	} {
		ops := operations(t, set.sources, set.typenames)
		if len(ops) < set.atLeast {
			t.Fatalf("%s: found %d operations, want at least %d", set.name, len(ops), set.atLeast)
		}
		public := 0
		var largest documentCost
		var largestName string
		for name, text := range ops {
			if c, _ := budget.measure(t.Context(), text, member.tokens); c.selections > largest.selections {
				largest, largestName = c, name
			}
			if len(text) > maxDocumentBytes || (asksOnlyPublicFields(t, text) && len(text) > anonymousMaxDocumentBytes) {
				t.Errorf("%s operation %s is %d bytes long, over its size limit", set.name, name, len(text))
			}
			anonymousOnly = false
			if err := budget.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: text}); err != nil {
				t.Errorf("%s operation %s refused: %s\n%s", set.name, name, err.Message, text)
			}
			if !asksOnlyPublicFields(t, text) {
				continue
			}
			public++
			anonymousOnly = true
			if err := budget.MutateOperationParameters(t.Context(), &graphql.RawParams{Query: text}); err != nil {
				t.Errorf("%s operation %s refused without a session: %s", set.name, name, err.Message)
			}
		}
		t.Logf("%s: %d operations, the largest %s: %d tokens, %d selections, depth %d, %d spreads",
			set.name, len(ops), largestName, largest.tokens, largest.selections, largest.depth, largest.spreads)
		if public == 0 {
			t.Errorf("%s: no operation asks only public fields; the session query should", set.name)
		}
	}
}

// operations returns the text of each operation of sources with the
// fragments it spreads, by name; typenames adds __typename to every
// selection set but the operations' own, as urql does.
func operations(t *testing.T, sources []string, typenames bool) map[string]string {
	t.Helper()
	fragments := map[string]*ast.FragmentDefinition{}
	var ops ast.OperationList
	for _, src := range sources {
		doc, err := parser.ParseQuery(&ast.Source{Input: src})
		if err != nil {
			t.Fatalf("parse %q: %v", src, err)
		}
		for _, f := range doc.Fragments {
			if typenames {
				f.SelectionSet = addTypenames(f.SelectionSet)
			}
			fragments[f.Name] = f
		}
		for _, op := range doc.Operations {
			if typenames {
				for _, sel := range op.SelectionSet {
					if f, ok := sel.(*ast.Field); ok {
						f.SelectionSet = addTypenames(f.SelectionSet)
					}
				}
			}
			ops = append(ops, op)
		}
	}
	out := map[string]string{}
	for _, op := range ops {
		doc := &ast.QueryDocument{Operations: ast.OperationList{op}}
		seen := map[string]bool{}
		var spread func(ast.SelectionSet)
		spread = func(set ast.SelectionSet) {
			for _, sel := range set {
				switch sel := sel.(type) {
				case *ast.Field:
					spread(sel.SelectionSet)
				case *ast.InlineFragment:
					spread(sel.SelectionSet)
				case *ast.FragmentSpread:
					f := fragments[sel.Name]
					if f == nil {
						t.Fatalf("operation %s spreads unknown fragment %s", op.Name, sel.Name)
					}
					if !seen[f.Name] {
						seen[f.Name] = true
						doc.Fragments = append(doc.Fragments, f)
						spread(f.SelectionSet)
					}
				}
			}
		}
		spread(op.SelectionSet)
		var b bytes.Buffer
		formatter.NewFormatter(&b).FormatQueryDocument(doc)
		out[op.Name] = b.String()
	}
	return out
}

// addTypenames adds __typename to set and every selection set in it.
func addTypenames(set ast.SelectionSet) ast.SelectionSet {
	if len(set) == 0 {
		return set
	}
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			sel.SelectionSet = addTypenames(sel.SelectionSet)
		case *ast.InlineFragment:
			sel.SelectionSet = addTypenames(sel.SelectionSet)
		}
	}
	return append(set, &ast.Field{Alias: "__typename", Name: "__typename"})
}

// asksOnlyPublicFields reports whether the operation of text asks only
// root fields a caller without a session may ask.
func asksOnlyPublicFields(t *testing.T, text string) bool {
	t.Helper()
	doc, err := parser.ParseQuery(&ast.Source{Input: text})
	if err != nil {
		t.Fatal(err)
	}
	for _, sel := range doc.Operations[0].SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || !resolvers.PublicField(f.Name) {
			return false
		}
	}
	return true
}
