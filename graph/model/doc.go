// Package model holds the Go types of the GraphQL schema's types: those
// gqlgen generates (models_gen.go), and the hand-written ones the schema is
// bound to where the Kubernetes API types do not fit as they are: wrappers
// that add computed fields (global IDs, maps as key/value lists), the
// connection types of paged lists, and the scalars' marshalers. Their
// methods are cheap and run inline in the executor, unlike resolvers,
// which gqlgen runs concurrently.
//
// gqlgen.yml binds the schema's types to these; generated code in graph/
// uses them, and resolvers build them. Only the Argo CD-compatible
// api/v1alpha1 types are bound as they are besides these.
package model
