// Package controller will hold the Application reconciler: it compares the
// manifests rendered by the repository server with the live cluster, judges
// health, and runs sync operations. Its sub-packages are cache (the cluster
// cache), diff, health and sync. The package is empty until the Application
// controller issue lands; see docs/architecture in DESIGN.md.
package controller
