// Package resolvers implements the GraphQL schema in schema.graphqls.
//
// Resolvers are thin: they authorize, call a service or loader, and map the
// result to a graph/model type. The root Resolver only holds dependencies;
// gqlgen generates the per-type resolver stubs next to this file
// (*.resolvers.go) and keeps their bodies on regeneration.
//
// Errors that clients may see are returned as *Error with a stable Code;
// every other error reaches clients as "internal error" (see internal/server).
package resolvers

import "github.com/graphcd/graphcd/internal/version"

// Resolver is the root resolver. It holds the dependencies every resolver
// needs and nothing else.
type Resolver struct {
	// Build is the build information reported by Query.version.
	Build version.Info
}
