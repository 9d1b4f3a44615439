package server

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/graphcd/graphcd/resolvers"
)

// depthLimit rejects operations whose selections nest deeper than max,
// counting through fragments, before anything is resolved.
type depthLimit struct{ max int }

var (
	_ graphql.HandlerExtension        = depthLimit{}
	_ graphql.OperationContextMutator = depthLimit{}
)

func (depthLimit) ExtensionName() string { return "DepthLimit" }

func (d depthLimit) Validate(graphql.ExecutableSchema) error {
	if d.max < 1 {
		return fmt.Errorf("depth limit must be positive, got %d", d.max)
	}
	return nil
}

func (d depthLimit) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	if depth := selectionDepth(oc.Operation.SelectionSet, d.max+1); depth > d.max {
		return &gqlerror.Error{
			Message:    fmt.Sprintf("operation is nested deeper than the limit of %d", d.max),
			Extensions: map[string]any{"code": string(resolvers.CodeBadUserInput)},
		}
	}
	return nil
}

// selectionDepth returns the depth of set, or stop once it reaches stop
// (so that it never walks further than needed, whatever the document).
func selectionDepth(set ast.SelectionSet, stop int) int {
	if stop <= 0 {
		return 0
	}
	deepest := 0
	for _, sel := range set {
		var d int
		switch s := sel.(type) {
		case *ast.Field:
			d = 0
			if len(s.SelectionSet) > 0 {
				d = selectionDepth(s.SelectionSet, stop-1)
			}
			d++
		case *ast.InlineFragment:
			d = selectionDepth(s.SelectionSet, stop)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				d = selectionDepth(s.Definition.SelectionSet, stop)
			}
		}
		deepest = max(deepest, d)
		if deepest >= stop {
			return deepest
		}
	}
	return deepest
}

// noIntrospection refuses operations that query the schema (__schema or
// __type at the root) with a clear FORBIDDEN error, rather than the
// executor's anonymous one.
type noIntrospection struct{}

var (
	_ graphql.HandlerExtension        = noIntrospection{}
	_ graphql.OperationContextMutator = noIntrospection{}
)

func (noIntrospection) ExtensionName() string { return "NoIntrospection" }

func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }

func (noIntrospection) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, nil) {
		if f.Name == "__schema" || f.Name == "__type" {
			return &gqlerror.Error{
				Message:    "introspection is disabled on this server",
				Extensions: map[string]any{"code": string(resolvers.CodeForbidden)},
			}
		}
	}
	return nil
}
