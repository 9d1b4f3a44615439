// Package gqlmodel holds the hand-written Go types the GraphQL schema is
// bound to where the Kubernetes API types do not fit as they are: wrappers
// that add computed fields (global IDs, maps as key/value lists) and the
// connection types of paged lists. Their methods are cheap and run inline
// in the executor, unlike resolvers, which gqlgen runs concurrently.
//
// gqlgen.yml binds the schema's types to these; generated code in graph/
// uses them, and resolvers build them.
package gqlmodel
