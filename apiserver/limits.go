package apiserver

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/graphcd/graphcd/resolvers"
)

// documentLimits bound one GraphQL document of one kind of caller.
type documentLimits struct {
	// tokens bounds the lexical tokens, comments included.
	tokens int
	// selections bounds the fields, inline fragments and fragment spreads
	// with every spread expanded: what validation, the complexity walk
	// and the executor may visit.
	selections int
	// depth bounds the nesting of fields, through fragments.
	depth int
	// spreads bounds the fragment spreads as written.
	spreads int
	// repeats bounds how often one place of a response is selected.
	repeats int
}

// documentLimitsOf returns the document limits of o (with its defaults
// set): those of everybody, and those of callers who may ask only the
// public fields, which are never larger.
func documentLimitsOf(o Options) (member, anonymous documentLimits) {
	member = documentLimits{
		tokens: o.MaxTokens, selections: o.MaxSelections, depth: o.MaxDepth,
		spreads: o.MaxFragmentSpreads, repeats: o.MaxFieldRepeats,
	}
	anonymous = member
	anonymous.tokens = min(o.AnonymousMaxTokens, o.MaxTokens)
	anonymous.selections = min(o.AnonymousMaxSelections, o.MaxSelections)
	return member, anonymous
}

// validate reports a limit that is not positive.
func (l documentLimits) validate(who string) error {
	for _, v := range []struct {
		name  string
		value int
	}{{"token", l.tokens}, {"selection", l.selections}, {"depth", l.depth}, {"fragment spread", l.spreads}, {"repeated field", l.repeats}} {
		if v.value < 1 {
			return fmt.Errorf("%s %s limit must be positive, got %d", who, v.name, v.value)
		}
	}
	return nil
}

// check returns the error refusing a document of cost c, or nil when c
// is within l. anonymous says the caller has no session, to tell them
// that logging in raises the limits.
func (l documentLimits) check(c documentCost, anonymous bool) *gqlerror.Error {
	var msg string
	switch {
	case len(c.cycle) > 0:
		msg = fmt.Sprintf("fragment %s spreads itself: %s", c.cycle[0], strings.Join(c.cycle, " -> "))
	case c.tokens > l.tokens:
		msg = fmt.Sprintf("document has more than %d tokens", l.tokens)
	case c.selections > l.selections:
		msg = fmt.Sprintf("document expands to more than %d selections once its fragment spreads are expanded", l.selections)
	case c.spreads > l.spreads:
		msg = fmt.Sprintf("document has more than %d fragment spreads", l.spreads)
	case c.depth > l.depth:
		msg = fmt.Sprintf("operation is nested deeper than the limit of %d", l.depth)
	case c.repeats > l.repeats:
		msg = fmt.Sprintf("document selects %s more than %d times", c.repeated, l.repeats)
	default:
		return nil
	}
	if anonymous && len(c.cycle) == 0 {
		msg += " (the limit for callers without a session: log in first)"
	}
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(resolvers.CodeBadUserInput)}}
}

// documentBudget refuses documents that would cost too much to validate,
// measure or execute, before gqlgen parses and validates them: it runs
// for every transport as the executor creates an operation (after the
// persisted-query lookup, which may supply the document), measuring each
// document once (see measureDocument) and remembering its cost. Callers
// who may ask only the public fields get the anonymous limits. It also
// stops an operation whose client has gone before it executes.
//
// Documents it cannot measure (more tokens than the member limit, syntax
// errors) go on to gqlgen's parser, which refuses them with its own
// error, its work bounded by the same token limit.
type documentBudget struct {
	member, anonymous documentLimits
	// authenticated reports whether the caller of ctx may ask more than
	// the public fields.
	authenticated func(context.Context) bool
	// costs are the costs of documents measured, by SHA-256 of their
	// text.
	costs graphql.Cache[documentCost]
}

var (
	_ graphql.HandlerExtension          = documentBudget{}
	_ graphql.OperationParameterMutator = documentBudget{}
	_ graphql.OperationContextMutator   = documentBudget{}
)

func (documentBudget) ExtensionName() string { return "DocumentBudget" }

func (b documentBudget) Validate(graphql.ExecutableSchema) error {
	if err := b.member.validate("GraphQL"); err != nil {
		return err
	}
	return b.anonymous.validate("anonymous GraphQL")
}

// MutateOperationParameters measures the document of p and refuses it
// when it is over the caller's limits.
func (b documentBudget) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if ctx.Err() != nil {
		return errClientGone()
	}
	if p.Query == "" {
		return nil // gqlgen answers "no operation provided"
	}
	anonymous := !b.authenticated(ctx)
	limits := b.member
	if anonymous {
		limits = b.anonymous
	}
	cost, measured := b.measure(ctx, p.Query, limits.tokens)
	if !measured {
		if anonymous && cost.tokens > limits.tokens {
			return limits.check(cost, anonymous)
		}
		return nil
	}
	return limits.check(cost, anonymous)
}

// measure returns the cost of query. It reads at most maxTokens tokens:
// past them, or when the document does not parse, measured is false
// and cost holds only the tokens counted.
func (b documentBudget) measure(ctx context.Context, query string, maxTokens int) (cost documentCost, measured bool) {
	sum := sha256.Sum256([]byte(query))
	key := string(sum[:])
	if c, ok := b.costs.Get(ctx, key); ok {
		return c, true
	}
	tokens, err := countTokens(query, maxTokens)
	if err != nil {
		return documentCost{tokens: tokens}, false
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, b.member.tokens)
	if err != nil {
		return documentCost{tokens: tokens}, false
	}
	cost = measureDocument(doc)
	cost.tokens = tokens
	if len(cost.cycle) == 0 && cost.selections <= b.member.selections {
		measureRepeats(doc, &cost)
	}
	b.costs.Add(ctx, key, cost)
	return cost, true
}

// MutateOperationContext refuses to start an operation whose client has
// gone while it was parsed, validated and measured.
func (documentBudget) MutateOperationContext(ctx context.Context, _ *graphql.OperationContext) *gqlerror.Error {
	if ctx.Err() != nil {
		return errClientGone()
	}
	return nil
}

// errClientGone answers a request whose client went away; nobody reads it.
func errClientGone() *gqlerror.Error {
	return &gqlerror.Error{Message: "request cancelled: the client went away"}
}

// Sizes of a GraphQL document's text. The persisted-query cache and
// gqlgen's query cache each keep up to a thousand documents, so these
// bound what they hold (128 MiB and 8 MiB); the largest document the
// console sends is about 4 KiB.
const (
	maxDocumentBytes          = 128 << 10
	anonymousMaxDocumentBytes = 8 << 10
)

// documentSize refuses a document whose text is longer than the caller's
// limit before anything reads or remembers it.
type documentSize struct {
	authenticated func(context.Context) bool
}

var (
	_ graphql.HandlerExtension          = documentSize{}
	_ graphql.OperationParameterMutator = documentSize{}
)

func (documentSize) ExtensionName() string { return "DocumentSize" }

func (documentSize) Validate(graphql.ExecutableSchema) error { return nil }

func (d documentSize) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	limit, who := maxDocumentBytes, ""
	if !d.authenticated(ctx) {
		limit, who = anonymousMaxDocumentBytes, " (the limit for callers without a session: log in first)"
	}
	if len(p.Query) <= limit {
		return nil
	}
	return &gqlerror.Error{
		Message:    fmt.Sprintf("document is longer than %d bytes%s", limit, who),
		Extensions: map[string]any{"code": string(resolvers.CodeBadUserInput)},
	}
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
