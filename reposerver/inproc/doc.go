// Package inproc implements reposerver.Service in the calling process: it
// resolves the target revision, checks the repository out (Git) or pulls
// the chart (Helm repository, OCI registry), detects the tool, renders
// (directory and Jsonnet, Helm, Kustomize, config-management plugins) and
// caches the result keyed by everything that determines it. Helm,
// Kustomize and directory renders run in `graphcd render-worker` child
// processes, each under a memory limit and the render deadline
// (WorkerOptions); ServeRenderWorker is the child's side.
//
// `graphcd server` uses it unless told to render with a separate
// `graphcd repo-server`, which serves the same Local over gRPC
// (reposerver/remote).
package inproc
