// Package statusboard is where graphcd's processes publish how they and
// the destination clusters are doing, for the API to show: each
// controller shard's leader writes the state of its clusters (version,
// connection, cache figures, apps) every few seconds, and every API
// replica, controller and repository server writes a heartbeat of its
// own.
//
//	board := statusboard.NewRedis(client, statusboard.RedisOptions{Secret: secret})
//	err := board.PutClusters(ctx, 0, []statusboard.Cluster{...})
//	err = board.Beat(ctx, statusboard.Component{Kind: statusboard.KindAPI, ID: host})
//	clusters, err := board.Clusters(ctx) // every fresh shard's, by server
//	components, err := board.Components(ctx)
//
// Entries are fresh for StaleAfter after they were written; older ones
// are left out (and removed), so that a shard or replica that stops is
// gone from the board within seconds. Everything is bounded: at most
// MaxClusters clusters per shard and MaxComponents components, each of a
// bounded size. Like every Redis value graphcd shares, entries are
// signed (see internal/keysign); Memory serves a single process.
package statusboard
